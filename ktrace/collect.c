// SPDX-License-Identifier: GPL-2.0
/*
 * collect: ktrace --listen, the collector of --send streams (ktnet.h).
 *
 * One thread, one poll() over the listening socket and every connection,
 * all of them non-blocking: a slow or dead sender never holds up another.
 * Each machine (the name in its HELLO) gets a directory, -o DIR/NAME,
 * holding what a local recording would: trace.cpuN, written with the
 * same writer as ktrace's own files, trace.kallsyms, .irqs and .probes as
 * the sender shipped them, and trace.clock, one line "t1 t2 t3 t4" per
 * clock probe (dtrace aligns the machines with them).  A lost count in a
 * frame becomes a KTRACE_META_LOST record before its records, so dtrace
 * counts it as any other.
 *
 * Acknowledgements only follow a write synced to the disk (every
 * SYNC_EVERY_S), and beside each trace file .trace.cpuN.state says which
 * frame and how many records the file holds (a frame is acknowledged only
 * once that is written and synced too): a collector
 * killed and started again cuts the file back to that and tells the
 * sender, which sends the rest from its spool.  A machine's files are
 * open while its connection is; the next HELLO opens them the same way.  A new recording
 * (another session number in HELLO) moves the directory of the last one
 * of that name aside, to DIR/.previous/NAME.SESSION.
 *
 * With --key, a connection proves the key of the name it sends as before
 * its HELLO is read (AUTH, CHALLENGE, PROOF: ktnet.h), and every message
 * after that is sealed: a peer that fails never reaches on_hello(), so it
 * touches no machine's files nor the connection sending it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>
#include <zstd.h>

#include "files.h"
#include "ktfile.h"
#include "ktnet.h"
#include "ktrace.h"
#include "opts.h"
#include "util.h"

#define FILE_MAX	KTNET_PAYLOAD_MAX	/* a shipped kallsyms: ktrace sends no more */
#define MESSAGES_PER_TURN 64
#define OUT_MAX		(1u << 20)	/* replies queued to a peer that does not read them */
#define MACHINES_MAX	4096
#define PEER_IDLE_S	10		/* senders probe 4 times a second: silence is death */
/*
 * Payload memory: a message's payload is read only once its @len (+1, a
 * NUL) is reserved from PAYLOAD_BUDGET, shared by all connections; one
 * that does not fit waits, unread, until another message is done (one is
 * always let through, so the biggest message a sender may send goes).
 * The buffer is freed after each message: an idle connection holds none.
 */
#define PAYLOAD_BUDGET	(2 * (size_t)KTNET_PAYLOAD_MAX + 2)
#define PAYLOAD_MIN_BPS	(64u << 10)	/* slower, after PEER_IDLE_S: a peer holding memory */
/*
 * Peers holding PAYLOAD_BUDGET must not keep the others waiting: those
 * waiting are served first come, first served (nobody reserves before
 * them); while any waits, a holder that would need more than WAIT_MAX_S
 * more at the rate it sent since RATE_GRACE_S is closed (its sender sends
 * the frame again); and small messages (a HELLO, a frame or FILE up to
 * SMALL_PAYLOAD) have a budget of their own, so a sender is answered
 * whatever the big ones do.
 */
#define WAIT_MAX_S	10
#define RATE_GRACE_S	2
#define SMALL_PAYLOAD	(256u << 10)
#define SMALL_BUDGET	((size_t)16 << 20)
#define ACCEPT_RETRY_S	1		/* accept() failed for want of a resource: again after */
#define DECODE_KEEP	(4u << 20)	/* a DATA frame's columns kept for the next one */
#define SAID_MAX	4		/* write errors said once each, per machine */
/*
 * Frames written are synced and acknowledged together, this often: a
 * sync a poll turn cost the collector 70% more CPU a MB (bench/collect.sh).
 */
#define SYNC_EVERY_S	0.2

struct cstream {
	uint32_t id;
	struct ktfile_writer w;		/* the one descriptor a stream holds */
	char *state_path;		/* opened for each write: a descriptor less a stream */
	uint64_t seq;			/* the last frame written (the state: once synced) */
	bool unsynced;			/* frames written since the last sync_machine() */
	/*
	 * Its file was damaged (a state that does not match it): its whole
	 * records are kept, frames numbered from 0 again; the sender may go
	 * on from any later frame, and one lost marker of unknown count goes
	 * before the next frame's records.
	 */
	bool renumbered;
	bool ended;
};

struct machine {
	char name[KTNET_NAME_MAX];
	char *dir;
	uint64_t session;
	struct cstream *streams;
	unsigned int nr;
	struct conn *conn;		/* the connection sending it now, if any */
	bool unsynced;			/* a stream of it is */
	uint64_t records, lost;		/* written in this run of the collector */
	uint64_t lost_unknown;		/* markers of KTNET_LOST_UNKNOWN written */
	/*
	 * The errors of writing its files said since a trace write last
	 * worked: each once (a full disk fails every retry of every stream),
	 * another error is still said.
	 */
	int said[SAID_MAX];
	unsigned int nr_said;
};

struct conn {
	int fd;
	struct machine *m;
	uint8_t wire[KTNET_HDR_SIZE];
	size_t got;			/* of wire, then of payload */
	bool have_hdr;
	struct ktnet_hdr h;
	uint8_t *payload;
	size_t payload_cap;		/* grows as the payload's bytes come, not as @len says */
	size_t reserved;		/* of the collector's PAYLOAD_BUDGET, for this payload */
	bool small;			/* ... of SMALL_BUDGET instead */
	bool waiting;			/* for PAYLOAD_BUDGET: not read meanwhile */
	uint64_t ticket;		/* its turn among those waiting */
	double payload_start;		/* now() when the reservation was granted */
	double last_byte;		/* now() when the last byte came */
	uint64_t t_recv;		/* when the message's last byte came */
	uint8_t *out;			/* acks and replies not yet sent */
	size_t out_len, out_cap;
	char peer[80];
	struct handshake *hs;		/* --key: between AUTH and PROOF */
	struct ktnet_seal seal;		/* --key: after PROOF, every message */
	char authed[KTNET_NAME_MAX];	/* --key: the name whose key it proved */
};

struct handshake {
	struct ktnet_proofs p;
	uint8_t key[KTNET_KEY_BYTES];
};

struct collector {
	const char *dir;
	struct conn **conns;
	unsigned int nr_conns;
	struct machine **machines;
	unsigned int nr_machines;
	ZSTD_DCtx *dz;
	bool accept_paused;		/* out of file descriptors: new peers wait */
	bool accept_said;		/* ... and that was said (once a pause) */
	double accept_retry;		/* now() when accept() is tried again */
	size_t reserved;		/* payload bytes reserved by all connections */
	double sync_due;		/* now() when written frames are synced, acked */
	size_t reserved_small;		/* ... of SMALL_BUDGET, by small messages */
	unsigned int nr_waiting;	/* connections waiting for PAYLOAD_BUDGET */
	uint64_t next_ticket;		/* their turns: first come, first served */
	unsigned int files_cap;		/* stream files open at most, all machines */
	uint8_t *raw, *recs;		/* a DATA frame's columns; its records */
	size_t raw_cap;
	const char *key_path;		/* --key: one key, or (key_dir) DIR/NAME.key */
	bool key_dir;
	uint8_t key[KTNET_KEY_BYTES];
};

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static char *path_join(const char *a, const char *b)
{
	size_t len = strlen(a) + strlen(b) + 2;
	char *p = xmalloc(len);

	snprintf(p, len, "%s/%s", a, b);
	return p;
}

/* A message to @c, sealed once its handshake is done. */
static void queue_msg(struct conn *c, const struct ktnet_hdr *h, const void *payload)
{
	size_t len = KTNET_HDR_SIZE + h->len;
	size_t need = c->seal.on ? KTNET_HDR_SIZE + len + KTNET_SEAL_TAG : len;
	uint8_t *o;

	while (c->out_len + need > c->out_cap) {
		c->out_cap = c->out_cap ? 2 * c->out_cap : 4096;
		c->out = xrealloc(c->out, c->out_cap);
	}
	o = c->out + c->out_len + (c->seal.on ? KTNET_HDR_SIZE : 0);
	ktnet_encode(o, h);
	if (h->len)
		memcpy(o + KTNET_HDR_SIZE, payload, h->len);
	if (c->seal.on)
		ktnet_seal(&c->seal, c->out + c->out_len, o, len, o + len);
	c->out_len += need;
}

static void queue(struct conn *c, const struct ktnet_hdr *h)
{
	queue_msg(c, h, NULL);
}

static int flush(struct conn *c)
{
	while (c->out_len) {
		ssize_t n = send(c->fd, c->out, c->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -errno;
		memmove(c->out, c->out + n, c->out_len - n);
		c->out_len -= n;
	}
	return 0;
}

/*
 * Whether to say write error @err of @m: once, until a trace write works
 * again (m->nr_said = 0); more kinds than SAID_MAX are all said.
 */
static bool say_write_error(struct machine *m, int err)
{
	for (unsigned int i = 0; i < m->nr_said; i++)
		if (m->said[i] == err)
			return false;
	if (m->nr_said < SAID_MAX)
		m->said[m->nr_said++] = err;
	return true;
}

#define STATE_LINE_LEN	42	/* "%020 %020\n": the frame, the records */

/*
 * The state says what the trace file durably holds: an ACK only follows
 * it.  0 or -errno (a short write is -ENOSPC).
 */
static int write_state(struct cstream *st)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "%020" PRIu64 " %020" PRIu64 "\n", st->seq,
			   st->w.records);
	int fd = open(st->state_path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = pwrite(fd, line, len, 0);
	err = n < 0 ? errno : ENOSPC;
	/* on the disk before the ACK that lets the sender free the frame */
	if (n == len && fdatasync(fd) < 0)
		err = errno, n = -1;
	close(fd);
	if (n == len)
		return 0;
	return -err;
}

/* A state file's line, read as peer input: two 20-digit numbers, nothing else. */
static bool parse_state(const char *line, uint64_t *seq, uint64_t *records)
{
	for (int i = 0; i < STATE_LINE_LEN - 1; i++)
		if (i == 20 ? line[i] != ' ' : (line[i] < '0' || line[i] > '9'))
			return false;
	if (line[STATE_LINE_LEN - 1] != '\n' || line[STATE_LINE_LEN])
		return false;
	errno = 0;
	*seq = strtoull(line, NULL, 10);
	*records = strtoull(line + 21, NULL, 10);
	return !errno;	/* ERANGE: 20 digits may be above 2^64 - 1 */
}

static void close_machine(struct machine *m)
{
	for (unsigned int i = 0; i < m->nr; i++) {
		ktfile_close(&m->streams[i].w);
		free(m->streams[i].state_path);
	}
	free(m->streams);
	m->streams = NULL;
	m->nr = 0;
}

/*
 * Open stream @id of @m: the file and state a collector before us left
 * (cut back to what the state says was written), else new ones.  A file
 * that does not match its state (a power loss, a disk repaired) keeps its
 * whole records, never destroyed: the frames are numbered from 0 again and
 * the next frame, whatever its number, follows a lost marker of unknown
 * count.
 */
static int open_stream(struct machine *m, struct cstream *st, uint32_t id,
		       const struct ktfile_header *tmpl)
{
	char name[64], *path;
	struct ktfile_header h = *tmpl;
	uint64_t seq = 0, records = 0, whole = 0;
	char line[64] = "";
	bool have_state;
	struct stat sb;
	ssize_t n = 0;
	int fd, ret = 0;

	st->id = id;
	st->w.fd = -1;
	snprintf(name, sizeof(name), ".trace.cpu%u.state", id);
	st->state_path = path_join(m->dir, name);
	snprintf(name, sizeof(name), "trace.cpu%u", id);
	path = path_join(m->dir, name);
	fd = open(st->state_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = pread(fd, line, sizeof(line) - 1, 0);
		close(fd);
	} else if (errno != ENOENT) {
		ret = -errno;
		if (say_write_error(m, -ret))
			pr_err("%s: %s", st->state_path, strerror(-ret));
		goto out;
	}
	have_state = n > 0 && parse_state(line, &seq, &records);
	if (n > 0 && !have_state)
		pr_warn("%s: not a frame and a record count", st->state_path);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (uint64_t)sb.st_size >= KTFILE_HEADER_SIZE) {
		/* the count is checked by division: a multiplication could wrap */
		whole = ((uint64_t)sb.st_size - KTFILE_HEADER_SIZE) / sizeof(struct ktrace_record);
		if (have_state && records <= whole) {
			pr_debug("%s: going on after frame %" PRIu64 ", %" PRIu64 " records",
				 path, seq, records);
		} else {
			if (have_state)
				pr_warn("%s: does not hold the %" PRIu64 " records %s says: its %"
					PRIu64 " whole records kept, frames numbered from 0 again, "
					"a lost marker of unknown count after them", path, records,
					st->state_path, whole);
			else if (whole)
				pr_warn("%s: no state to go on from: its %" PRIu64 " whole records "
					"kept, frames numbered from 0 again, a lost marker of unknown "
					"count after them", path, whole);
			st->renumbered = whole || seq;
			records = whole;
			seq = 0;
		}
		/* bytes past the state: frames not acknowledged, sent again */
		if (ftruncate(fd, KTFILE_HEADER_SIZE + records * sizeof(struct ktrace_record)) ||
		    lseek(fd, 0, SEEK_END) < 0) {
			ret = -errno;
			close(fd);
			if (say_write_error(m, -ret))
				pr_err("%s: %s", path, strerror(-ret));
			goto out;
		}
		st->w.fd = fd;
		st->w.records = records;
		st->seq = seq;
		goto state;
	}
	if (fd >= 0)
		close(fd);
	/* no file, or not even a whole header: no record to keep */
	if (have_state && seq) {
		pr_warn("%s: missing or without a header, though %s says %" PRIu64 " frames: "
			"started again, frames numbered from 0 again", path, st->state_path, seq);
		st->renumbered = true;
	}
	h.cpu = id;
	ret = ktfile_create(&st->w, path, &h);
	if (ret < 0) {
		if (say_write_error(m, -ret))
			pr_err("%s: %s", path, kt_create_strerror(ret));
		goto out;
	}
	st->seq = 0;
state:
	/* a renumbered stream's state stays as found: a restart decides the same */
	if (st->renumbered)
		goto out;
	ret = write_state(st);
	if (ret < 0 && say_write_error(m, -ret))
		pr_err("%s: %s; the connection closed (and the next ones, until it can be "
		       "written)", st->state_path, strerror(-ret));
out:
	free(path);
	return ret;
}

/* The session of the directory's last recording, 0 if none. */
static uint64_t dir_session(const char *dir)
{
	char *p = path_join(dir, ".session"), line[32] = "";
	uint64_t session = 0;
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd >= 0) {
		if (read(fd, line, sizeof(line) - 1) > 0)
			session = strtoull(line, NULL, 16);
		close(fd);
	}
	free(p);
	return session;
}

/*
 * DIR/NAME/.session, whole or not at all (written beside, then renamed):
 * a directory without one is a recording that never began.  0 or -errno.
 */
static int write_session(struct machine *m, uint64_t session)
{
	char *tmp = path_join(m->dir, ".session.new"), *p = path_join(m->dir, ".session");
	char line[32];
	int len = snprintf(line, sizeof(line), "%016" PRIx64 "\n", session);
	int fd = kt_create_file(tmp), ret = 0;

	if (fd < 0) {
		ret = fd;
		if (say_write_error(m, -ret))
			pr_err("%s: %s", tmp, kt_create_strerror(fd));
		goto out;
	}
	ret = ktnet_write_all(fd, line, len);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, p) < 0)
		ret = -errno;
	if (ret) {
		if (say_write_error(m, -ret))
			pr_err("%s: %s; the connection closed (and the next ones, until it "
			       "can be written)", p, strerror(-ret));
		unlink(tmp);
	}
out:
	free(tmp);
	free(p);
	return ret;
}

/*
 * Move the last recording in DIR/NAME aside, to .previous/NAME.SESSION
 * (.1, .2 ... after it if that is taken: a recording of an unknown session
 * may come more than once); an empty directory (a start that failed) is
 * only removed.  0 or -1, said.
 */
static int move_aside(struct collector *col, struct machine *m, uint64_t old)
{
	char aside[KTNET_NAME_MAX + 48], *to;
	int ret = -1;

	if (rmdir(m->dir) == 0)
		return 0;
	/* hidden: dtrace DIR merges the machines, not their last recordings */
	to = path_join(col->dir, ".previous");
	mkdir(to, 0700);
	free(to);
	for (unsigned int n = 0; n < 1000; n++) {
		int len = snprintf(aside, sizeof(aside), ".previous/%s.%016" PRIx64, m->name, old);

		if (n)
			snprintf(aside + len, sizeof(aside) - len, ".%u", n);
		to = path_join(col->dir, aside);
		ret = rename(m->dir, to);
		if (ret == 0 || (errno != EEXIST && errno != ENOTEMPTY))
			break;
		free(to);
		to = NULL;
	}
	if (ret < 0)
		pr_err("%s: moving the last recording aside to %s: %s", m->dir,
		       to ? to : ".previous", strerror(errno));
	else
		pr_info("%s: a new recording; the last one is now %s", m->dir, to);
	free(to);
	return ret;
}

static int start_machine(struct collector *col, struct machine *m, uint64_t session,
			 const struct ktfile_header *tmpl, const uint32_t *ids, unsigned int nr)
{
	uint64_t old;

	close_machine(m);
	free(m->dir);
	m->dir = path_join(col->dir, m->name);
	old = dir_session(m->dir);
	if (old != session && access(m->dir, F_OK) == 0 && move_aside(col, m, old) < 0)
		return -1;
	if (old != session) {
		if (mkdir(m->dir, 0700) < 0 && errno != EEXIST) {
			if (say_write_error(m, errno))
				pr_err("%s: %s", m->dir, strerror(errno));
			return -1;
		}
		if (write_session(m, session) < 0)
			return -1;
	}
	m->session = session;
	m->streams = xcalloc(nr, sizeof(*m->streams));
	for (unsigned int i = 0; i < nr; i++) {
		m->streams[i].w.fd = -1;
	}
	m->nr = nr;
	for (unsigned int i = 0; i < nr; i++)
		if (open_stream(m, &m->streams[i], ids[i], tmpl) < 0)
			return -1;
	return 0;
}

static void sync_machine(struct machine *m);

static struct cstream *find_stream(struct machine *m, uint32_t id)
{
	for (unsigned int i = 0; m && i < m->nr; i++)
		if (m->streams[i].id == id)
			return &m->streams[i];
	return NULL;
}

static int on_hello(struct collector *col, struct conn *c)
{
	struct ktnet_hello hello;
	struct ktfile_header tmpl;
	struct machine *m = NULL;
	uint32_t *ids;
	unsigned int nr;
	int ret;

	if (c->h.len < sizeof(hello))
		return -EPROTO;
	if (c->m) {
		/* its machine would keep pointing at this connection once it closed */
		pr_warn("%s: a second HELLO on one connection (already %s): closed", c->peer,
			c->m->name);
		return -EPROTO;
	}
	memcpy(&hello, c->payload, sizeof(hello));
	nr = le32toh(hello.nr_streams);
	if (!memchr(hello.name, '\0', sizeof(hello.name)) || !ktnet_name_ok(hello.name)) {
		/* the name becomes a directory: only [A-Za-z0-9._-], no "." first */
		pr_warn("%s: a HELLO with a bad machine name (not 1-63 of A-Z a-z 0-9 . _ -, "
			"not . first): closed", c->peer);
		return -EPROTO;
	}
	if (col->key_path && strcmp(hello.name, c->authed)) {
		/* the name's key is what it proved, not another's */
		pr_warn("%s: a HELLO as %s, authenticated as %s: closed", c->peer, hello.name,
			c->authed);
		return -EPROTO;
	}
	if (!hello.session) {
		/* 0 is what dir_session() says of a directory without a recording */
		pr_warn("%s: %s: a HELLO of session 0: closed", c->peer, hello.name);
		return -EPROTO;
	}
	if (!nr || nr > KTNET_STREAMS_MAX || c->h.len != sizeof(hello) + 4 * nr) {
		pr_warn("%s: %s: a HELLO of %u streams in %u bytes: closed", c->peer, hello.name,
			nr, c->h.len);
		return -EPROTO;
	}
	memcpy(&tmpl, hello.header, sizeof(tmpl));
	if (memcmp(tmpl.magic, KTFILE_MAGIC, 8) || tmpl.header_size != KTFILE_HEADER_SIZE ||
	    tmpl.record_size != sizeof(struct ktrace_record)) {
		pr_warn("%s: a HELLO without a trace file header: closed", c->peer);
		return -EPROTO;
	}
	ids = xcalloc(nr, sizeof(*ids));
	for (unsigned int i = 0; i < nr; i++) {
		memcpy(&ids[i], c->payload + sizeof(hello) + 4 * i, 4);
		ids[i] = le32toh(ids[i]);
		for (unsigned int k = 0; k < i && ids[i] < KTNET_STREAMS_MAX; k++)
			if (ids[k] == ids[i])
				ids[i] = KTNET_STREAMS_MAX;
		if (ids[i] >= KTNET_STREAMS_MAX) {
			pr_warn("%s: %s: a HELLO with a stream id repeated or not below %u: closed",
				c->peer, hello.name, KTNET_STREAMS_MAX);
			free(ids);
			return -EPROTO;
		}
	}
	for (unsigned int i = 0; i < col->nr_machines; i++)
		if (!strcmp(col->machines[i]->name, hello.name))
			m = col->machines[i];
	if (!m && col->nr_machines >= MACHINES_MAX) {
		pr_warn("%s: %s: %u machines already, no more: closed", c->peer, hello.name,
			MACHINES_MAX);
		free(ids);
		return -EPROTO;
	}
	if (!m) {
		m = xcalloc(1, sizeof(*m));
		strcpy(m->name, hello.name);
		col->machines = xrealloc(col->machines,
					 (col->nr_machines + 1) * sizeof(*col->machines));
		col->machines[col->nr_machines++] = m;
	}
	if (!m->nr || m->session != le64toh(hello.session)) {
		/* a stream holds a descriptor: half of ours go to the files, at most */
		unsigned int open = 0;

		for (unsigned int i = 0; i < col->nr_machines; i++)
			open += col->machines[i] == m ? 0 : col->machines[i]->nr;
		if (open + nr > col->files_cap) {
			pr_warn("%s: %s: a HELLO of %u streams, with %u stream files open already, "
				"over the %u this collector keeps open (half its RLIMIT_NOFILE): "
				"closed", c->peer, hello.name, nr, open, col->files_cap);
			free(ids);
			return -EPROTO;
		}
	}
	if (m->conn && m->conn != c && m->session != le64toh(hello.session)) {
		/* two machines of one name: the second waits for the first */
		pr_warn("%s: %s is sending as %s already; %s has another recording: closed",
			c->peer, m->conn->peer, m->name, c->peer);
		free(ids);
		return -EPROTO;
	}
	if (m->conn && m->conn != c) {
		/* the sender is back on a new connection: the old one is dead */
		pr_info("%s: %s connected again (from %s)", m->name, m->conn->peer, c->peer);
		m->conn->m = NULL;
		shutdown(m->conn->fd, SHUT_RDWR);
	}
	if (m->unsynced)
		sync_machine(m);	/* its ACKs below say what is on the disk */
	m->conn = c;
	c->m = m;
	ret = 0;
	if (m->session != le64toh(hello.session) || !m->nr)
		ret = start_machine(col, m, le64toh(hello.session), &tmpl, ids, nr);
	for (unsigned int i = 0; !ret && i < nr; i++) {
		struct cstream *st = find_stream(m, ids[i]);

		if (!st) {
			pr_warn("%s: %s: cpu %u was not in its first HELLO: closed", c->peer,
				m->name, ids[i]);
			ret = -EPROTO;
		} else if (st->seq) {
			queue(c, &(struct ktnet_hdr){ .type = KTNET_ACK, .stream = st->id,
						      .seq = st->seq });
		}
	}
	free(ids);
	if (ret) {
		/* files half opened: the next HELLO starts from the state files again */
		close_machine(m);
		m->session = 0;
		m->conn = NULL;
		c->m = NULL;
		return -EPROTO;	/* said (or said before, for a write error) */
	}
	queue(c, &(struct ktnet_hdr){ .type = KTNET_ACK, .stream = KTNET_STREAM_NONE });
	if (!m->nr_said)
		pr_info("%s: %s from %s, %u stream%s", m->name,
			m->records ? "resumed" : "receiving", c->peer, nr, nr == 1 ? "" : "s");
	return 0;
}

static int on_data(struct collector *col, struct conn *c)
{
	struct machine *m = c->m;
	struct cstream *st = find_stream(m, c->h.stream);
	size_t raw = (size_t)c->h.records * sizeof(struct ktrace_record);
	unsigned long long size;
	const char *what = "trace.cpu";
	uint64_t lost;
	int ret;

	if (!st) {
		pr_warn("%s: %s: DATA for cpu %u, not a stream of its HELLO: closed", c->peer,
			m->name, c->h.stream);
		return -EPROTO;
	}
	if (c->h.seq <= st->seq) {	/* sent again after a lost ack: written already */
		if (!st->unsynced)	/* else sync_machine() acknowledges it */
			queue(c, &(struct ktnet_hdr){ .type = KTNET_ACK, .stream = st->id,
						      .seq = st->seq });
		return 0;
	}
	/*
	 * Frames come 1, 2, 3 ...; a jump only with a lost marker of unknown
	 * count: one the sender says (KTNET_LOST_UNKNOWN, ktnet.h), or ours
	 * after a damaged file.
	 */
	if (c->h.seq != st->seq + 1 && !st->renumbered && c->h.lost != KTNET_LOST_UNKNOWN) {
		pr_warn("%s: %s cpu %u: frame %" PRIu64 " after %" PRIu64 ": closed", c->peer,
			m->name, st->id, c->h.seq, st->seq);
		return -EPROTO;
	}
	lost = st->renumbered ? KTNET_LOST_UNKNOWN : c->h.lost;
	if (raw > col->raw_cap) {
		col->raw = xrealloc(col->raw, raw);
		col->recs = xrealloc(col->recs, raw);
		col->raw_cap = raw;
	}
	if (raw) {
		size = ZSTD_getFrameContentSize(c->payload, c->h.len);
		if (size != raw ||
		    ZSTD_decompressDCtx(col->dz, col->raw, raw, c->payload, c->h.len) != raw) {
			pr_warn("%s: %s cpu %u: frame %" PRIu64 " is no zstd frame of %u records: "
				"closed", c->peer, m->name, st->id, c->h.seq, c->h.records);
			return -EPROTO;
		}
		ktnet_from_columns((struct ktrace_record *)col->recs, col->raw, c->h.records);
	}
	if (lost) {
		struct ktrace_record mark = { .tsc = c->h.first_tsc, .event = KTRACE_META_LOST,
					      .arg1 = (uint32_t)lost, .arg2 = (uint32_t)(lost >> 32) };
		ret = ktfile_append(&st->w, &mark, 1);
		if (ret < 0)
			goto write_error;
	}
	ret = ktfile_append(&st->w, (struct ktrace_record *)col->recs, c->h.records);
	if (ret < 0)
		goto write_error;
	/* the state and the ACK follow in sync_machine(), at the end of the turn */
	st->seq = c->h.seq;
	st->renumbered = false;
	st->unsynced = true;
	m->unsynced = true;
	m->records += c->h.records;
	if (lost == KTNET_LOST_UNKNOWN)
		m->lost_unknown++;
	else
		m->lost += lost;
	return 0;
write_error:
	/*
	 * Not acknowledged: the sender keeps the frame.  The next HELLO opens
	 * the files again, cut back to what the state says was written.
	 */
	if (say_write_error(m, -ret))
		pr_err("%s/%s%u%s: %s; frame %" PRIu64 " not written, the connection "
		       "closed (and the next ones, until a write works)", m->dir, what, st->id,
		       *what == '.' ? ".state" : "", strerror(-ret), c->h.seq);
	close_machine(m);
	m->session = 0;
	return -EPROTO;
}

/*
 * The frames of @m written since the last call, made durable and
 * acknowledged: each trace file synced, then its state written (and
 * synced), then the ACK, so a power loss on the collector's host loses no
 * frame the sender freed.  Every SYNC_EVERY_S, for all the frames since.
 * A failure closes the machine's files and connection: nothing of it is
 * acknowledged, the next HELLO goes on from the state files.
 */
static void sync_machine(struct machine *m)
{
	m->unsynced = false;
	for (unsigned int i = 0; i < m->nr; i++) {
		struct cstream *st = &m->streams[i];
		const char *what = "trace.cpu";
		int ret = 0;

		if (!st->unsynced)
			continue;
		st->unsynced = false;
		if (fdatasync(st->w.fd) < 0)
			ret = -errno;
		if (!ret) {
			what = ".trace.cpu";
			ret = write_state(st);
		}
		if (ret < 0) {
			if (say_write_error(m, -ret))
				pr_err("%s/%s%u%s: %s; frame %" PRIu64 " not written, the connection "
				       "closed (and the next ones, until a write works)", m->dir, what,
				       st->id, *what == '.' ? ".state" : "", strerror(-ret), st->seq);
			close_machine(m);
			m->session = 0;
			if (m->conn)
				shutdown(m->conn->fd, SHUT_RDWR);
			return;
		}
		if (m->nr_said)
			pr_info("%s: writing again", m->dir);
		m->nr_said = 0;
		if (m->conn)
			queue(m->conn, &(struct ktnet_hdr){ .type = KTNET_ACK, .stream = st->id,
							    .seq = st->seq });
	}
}

static int on_file(struct conn *c)
{
	static const char *const suffixes[] = { ".kallsyms", ".irqs", ".probes" };
	size_t nlen = strnlen((char *)c->payload, c->h.len);
	unsigned long long size;
	char name[32], *path, *tmp;
	void *buf;
	int fd, err = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(suffixes); i++)
		if (nlen < c->h.len && !strcmp((char *)c->payload, suffixes[i]))
			break;
	if (i == ARRAY_SIZE(suffixes)) {
		pr_warn("%s: %s: a FILE of no known kind: left out", c->peer, c->m->name);
		return 0;
	}
	size = ZSTD_getFrameContentSize(c->payload + nlen + 1, c->h.len - nlen - 1);
	if (size > FILE_MAX) {
		pr_warn("%s: %s: %s: not a zstd frame of at most %u MiB: left out", c->peer,
			c->m->name, suffixes[i], FILE_MAX >> 20);
		return 0;
	}
	buf = xmalloc(size + 1);
	if (ZSTD_decompress(buf, size, c->payload + nlen + 1, c->h.len - nlen - 1) != size) {
		pr_warn("%s: %s: %s: a bad zstd frame: left out", c->peer, c->m->name, suffixes[i]);
		free(buf);
		return 0;
	}
	/*
	 * Every connection sends its FILEs again: the copy there is replaced
	 * whole or not at all (written beside, renamed over), so a full disk
	 * never costs the good one.
	 */
	snprintf(name, sizeof(name), "trace%s", suffixes[i]);
	path = path_join(c->m->dir, name);
	snprintf(name, sizeof(name), ".trace%s.new", suffixes[i]);
	tmp = path_join(c->m->dir, name);
	fd = kt_create_file(tmp);
	if (fd < 0) {
		if (say_write_error(c->m, -fd))
			pr_warn("%s: %s; %s left as it was", tmp, kt_create_strerror(fd), path);
		goto out;
	}
	err = -ktnet_write_all(fd, buf, size);
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err) {
		if (say_write_error(c->m, err))
			pr_warn("%s: %s; %s left as it was", tmp, strerror(err), path);
		unlink(tmp);
	}
out:
	free(tmp);
	free(path);
	free(buf);
	return 0;
}

static void on_clock(struct conn *c)
{
	char *path = path_join(c->m->dir, "trace.clock"), line[100];
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	int len = snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			   ktnet_t(&c->h, 0), ktnet_t(&c->h, 1), ktnet_t(&c->h, 2),
			   ktnet_t(&c->h, 3));

	/* 4 probes a second: said once */
	if ((fd < 0 || write(fd, line, len) != len) && say_write_error(c->m, errno))
		pr_warn("%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(path);
}

/* Refused: the sender is told why (before the close, so it can say so). */
static int refuse(struct conn *c, enum ktnet_refusal why)
{
	queue(c, &(struct ktnet_hdr){ .type = KTNET_REFUSE, .stream = KTNET_STREAM_NONE,
				      .seq = why });
	flush(c);
	return -EPROTO;
}

/* The key of machine @name: --key FILE's, or --key DIR's NAME.key. 0 or -1, said. */
static int machine_key(struct collector *col, struct conn *c, const char *name,
		       uint8_t key[KTNET_KEY_BYTES])
{
	const char *why;
	char file[KTNET_NAME_MAX + 8], *path;
	int ret;

	if (!col->key_dir) {
		memcpy(key, col->key, KTNET_KEY_BYTES);
		return 0;
	}
	snprintf(file, sizeof(file), "%s.key", name);	/* a checked name: no '/' */
	path = path_join(col->key_path, file);
	ret = ktnet_key_load(path, key, &why);
	if (ret < 0)
		pr_warn("%s: AUTH as %s: --key %s: %s: refused", c->peer, name, path, why);
	free(path);
	return ret;
}

/*
 * AUTH: the name and the sender's nonce; answered with our nonce and our
 * proof of the name's key.  Nothing of the machine is looked at yet.
 */
static int on_auth(struct collector *col, struct conn *c)
{
	struct ktnet_auth a;
	struct ktnet_challenge ch;

	if (!col->key_path) {
		pr_warn("%s: AUTH, and this collector has no --key: refused", c->peer);
		return refuse(c, KTNET_REFUSE_NO_KEY);
	}
	memcpy(&a, c->payload, sizeof(a));
	if (!memchr(a.name, '\0', sizeof(a.name)) || !ktnet_name_ok(a.name)) {
		pr_warn("%s: an AUTH with a bad machine name: closed", c->peer);
		return -EPROTO;
	}
	c->hs = xcalloc(1, sizeof(*c->hs));
	if (machine_key(col, c, a.name, c->hs->key) < 0)
		return refuse(c, KTNET_REFUSE_UNKNOWN_NAME);
	strcpy(c->hs->p.name, a.name);
	memcpy(c->hs->p.sender_nonce, a.nonce, KTNET_NONCE_BYTES);
	ktnet_nonce(c->hs->p.collector_nonce);
	ktnet_proofs(&c->hs->p, c->hs->key);
	memcpy(ch.nonce, c->hs->p.collector_nonce, KTNET_NONCE_BYTES);
	memcpy(ch.mac, c->hs->p.collector_mac, KTNET_MAC_BYTES);
	queue_msg(c, &(struct ktnet_hdr){ .type = KTNET_CHALLENGE, .stream = KTNET_STREAM_NONE,
					  .len = sizeof(ch) }, &ch);
	return 0;
}

static void handshake_free(struct conn *c)
{
	if (c->hs)
		sodium_memzero(c->hs, sizeof(*c->hs));
	free(c->hs);
	c->hs = NULL;
}

/* PROOF: the sender's MAC over both nonces; from now on, sealed messages only. */
static int on_proof(struct conn *c)
{
	if (!ktnet_mac_equal(c->payload, c->hs->p.sender_mac)) {
		pr_warn("%s: AUTH as %s: the proof is not of its key (another key, or a "
			"handshake replayed): refused", c->peer, c->hs->p.name);
		return refuse(c, KTNET_REFUSE_BAD_PROOF);
	}
	ktnet_seal_start(&c->seal, c->hs->key, &c->hs->p, true);
	strcpy(c->authed, c->hs->p.name);
	pr_debug("%s: authenticated as %s", c->peer, c->authed);
	handshake_free(c);
	return 0;
}

/*
 * What a header may be on @c now, before its payload is read: NULL, or
 * why not (the connection closes; with a key, a HELLO in clear is told).
 */
static const char *admit(struct collector *col, struct conn *c)
{
	uint16_t type = c->h.type;

	if (c->seal.on)
		return type == KTNET_SEALED ? NULL : "a message in clear after the handshake";
	if (type == KTNET_AUTH)
		return c->hs ? "a second AUTH" : NULL;
	if (type == KTNET_PROOF)
		return c->hs ? NULL : "a PROOF before AUTH";
	if (type == KTNET_SEALED)
		return "a sealed message before the handshake";
	if (col->key_path) {
		refuse(c, KTNET_REFUSE_KEY_WANTED);
		return type == KTNET_HELLO ? "a HELLO without a key (this collector wants AUTH "
			"first): refused" : "a message before AUTH";
	}
	return NULL;
}

/* A SEALED message: decrypted, then it is the message it holds. <0: close. */
static int unseal(struct conn *c)
{
	size_t len = c->h.len - KTNET_HDR_SIZE - KTNET_SEAL_TAG;
	struct ktnet_hdr inner;
	const char *bad;

	if (ktnet_unseal(&c->seal, c->wire, c->payload, c->h.len)) {
		pr_warn("%s: %s: a sealed message that does not authenticate (altered, sent again "
			"or out of order): closed", c->peer, c->authed);
		return -EPROTO;
	}
	bad = ktnet_decode(&inner, c->payload);
	if (!bad && inner.len != len)
		bad = "a sealed message whose header says another length";
	if (!bad && inner.type >= KTNET_AUTH)
		bad = "a handshake message sealed";
	if (!bad && !c->m && inner.type != KTNET_HELLO)
		bad = "a message before HELLO";
	if (bad) {
		pr_warn("%s: %s: %s: closed", c->peer, c->authed, bad);
		return -EPROTO;
	}
	memmove(c->payload, c->payload + KTNET_HDR_SIZE, len);
	c->payload[len] = '\0';
	c->h = inner;
	return 0;
}

/* A whole message has come; <0: close the connection. */
static int on_message(struct collector *col, struct conn *c)
{
	struct cstream *st;
	int ret;

	if (c->h.type == KTNET_SEALED && (ret = unseal(c)) < 0)
		return ret;
	if (c->h.type == KTNET_AUTH)
		return on_auth(col, c);
	if (c->h.type == KTNET_PROOF)
		return on_proof(c);
	if (c->h.type == KTNET_HELLO)
		return on_hello(col, c);
	if (!c->m) {
		pr_warn("%s: a message before HELLO: closed", c->peer);
		return -EPROTO;
	}
	switch (c->h.type) {
	case KTNET_DATA: {
		int ret = on_data(col, c);

		/* a peer's 4M-record frame must not keep 2 x 96 MiB with us */
		if (col->raw_cap > DECODE_KEEP) {
			free(col->raw);
			free(col->recs);
			col->raw = col->recs = NULL;
			col->raw_cap = 0;
		}
		return ret;
	}
	case KTNET_FILE:
		return on_file(c);
	case KTNET_PROBE: {
		struct ktnet_hdr r = c->h;

		r.type = KTNET_PROBE_REPLY;
		ktnet_t(&r, 1) = c->t_recv;
		ktnet_t(&r, 2) = ktnet_mono_ns();
		r.len = 0;
		queue(c, &r);
		return 0;
	}
	case KTNET_CLOCK:
		on_clock(c);
		return 0;
	case KTNET_BEACON:
		pr_debug("%s: cpu %u idle up to %" PRIu64, c->m->name, c->h.stream, c->h.first_tsc);
		return 0;
	case KTNET_END:
		st = find_stream(c->m, c->h.stream);
		if (st && !st->ended && st->seq == c->h.seq) {
			st->ended = true;
			pr_debug("%s: cpu %u complete: %" PRIu64 " records in trace.cpu%u",
				 c->m->name, st->id, st->w.records, st->id);
		}
		return 0;
	default:
		pr_warn("%s: a %u message from a sender: closed", c->peer, c->h.type);
		return -EPROTO;
	}
}

/*
 * Reserve c's payload from SMALL_BUDGET or PAYLOAD_BUDGET; false: it
 * waits, unread, behind those waiting already.
 */
static bool reserve_payload(struct collector *col, struct conn *c)
{
	size_t need = (size_t)c->h.len + 1;

	c->small = need <= SMALL_PAYLOAD && col->reserved_small + need <= SMALL_BUDGET;
	if (c->small) {
		col->reserved_small += need;
	} else if ((col->reserved && col->reserved + need > PAYLOAD_BUDGET) ||
		   (!c->waiting && col->nr_waiting)) {
		if (!c->waiting) {
			c->waiting = true;
			c->ticket = col->next_ticket++;
			col->nr_waiting++;
		}
		return false;
	} else {
		col->reserved += need;
	}
	c->reserved = need;
	if (c->waiting) {
		c->last_byte = now();	/* its silence was ours */
		c->waiting = false;
		col->nr_waiting--;
	}
	c->payload_start = now();
	return true;
}

/* Those waiting for payload memory, the first come first, while it lasts. */
static void serve_waiting(struct collector *col)
{
	while (col->nr_waiting) {
		struct conn *first = NULL;

		for (unsigned int i = 0; i < col->nr_conns; i++)
			if (col->conns[i]->waiting &&
			    (!first || col->conns[i]->ticket < first->ticket))
				first = col->conns[i];
		if (!reserve_payload(col, first))
			return;
	}
}

/* The message is done, or the connection: its payload memory goes back. */
static void release_payload(struct collector *col, struct conn *c)
{
	if (c->small)
		col->reserved_small -= c->reserved;
	else
		col->reserved -= c->reserved;
	c->reserved = 0;
	free(c->payload);
	c->payload = NULL;
	c->payload_cap = 0;
}

/*
 * Read what there is, MESSAGES_PER_TURN messages at most (a fast sender
 * must not keep the others waiting); <0 (or -EPIPE at the end) closes the
 * connection.
 */
static int on_readable(struct collector *col, struct conn *c)
{
	for (unsigned int messages = 0; messages < MESSAGES_PER_TURN; ) {
		uint8_t *dst;
		size_t want;
		ssize_t n;
		const char *bad;
		int ret;

		if (c->have_hdr && c->h.len && !c->reserved && !reserve_payload(col, c))
			return 0;
		/*
		 * The payload buffer grows with the bytes that came (64 KiB, then
		 * doubling), so a header that claims 64 MiB costs the peer 64 MiB
		 * of sending, not us 64 MiB per connection.
		 */
		if (c->have_hdr && c->payload_cap < c->h.len + 1 && c->got + 1 >= c->payload_cap) {
			size_t cap = c->payload_cap ? 2 * c->payload_cap : 64u << 10;

			c->payload_cap = cap < c->h.len + 1 ? cap : c->h.len + 1;
			c->payload = xrealloc(c->payload, c->payload_cap);
		}
		if (c->have_hdr) {
			dst = c->payload + c->got;
			want = (c->h.len < c->payload_cap - 1 ? c->h.len : c->payload_cap - 1) - c->got;
		} else {
			dst = c->wire + c->got;
			want = KTNET_HDR_SIZE - c->got;
		}
		n = want ? read(c->fd, dst, want) : 0;

		if (want && n < 0 && errno == EINTR)
			continue;
		if (want && n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (want && n < 0)
			return -errno;
		if (want && n == 0)
			return -EPIPE;
		c->got += n;
		c->last_byte = now();
		if (!c->have_hdr) {
			if (c->got < KTNET_HDR_SIZE)
				continue;
			bad = ktnet_decode(&c->h, c->wire);
			if (!bad)
				bad = admit(col, c);
			if (bad) {
				pr_warn("%s: %s: closed", c->peer, bad);
				return -EPROTO;
			}
			if (!c->m && !c->seal.on && c->h.type != KTNET_HELLO &&
			    c->h.type != KTNET_AUTH && c->h.type != KTNET_PROOF) {
				/* before its payload is read: only HELLO may cost us memory */
				pr_warn("%s: a message before HELLO (type %u, %u bytes): closed",
					c->peer, c->h.type, c->h.len);
				return -EPROTO;
			}
			c->have_hdr = true;
			c->got = 0;
			if (c->h.len)
				continue;
		} else if (c->got < c->h.len) {
			continue;
		}
		c->t_recv = ktnet_mono_ns();
		c->have_hdr = false;
		c->got = 0;
		messages++;
		ret = on_message(col, c);
		release_payload(col, c);
		if (ret < 0)
			return ret;
		if (c->out_len > OUT_MAX) {
			pr_warn("%s: does not read its acknowledgements (%zu bytes waiting): closed",
				c->peer, c->out_len);
			return -EPROTO;
		}
	}
	return 0;
}

static void close_conn(struct collector *col, unsigned int i, int why)
{
	struct conn *c = col->conns[i];

	if (why != -EPIPE && why != -EPROTO)
		pr_warn("%s: %s: closed", c->peer, strerror(-why));
	if (c->m) {
		bool complete = c->m->nr;

		for (unsigned int k = 0; k < c->m->nr; k++)
			complete &= c->m->streams[k].ended;
		if (complete)
			pr_info("%s: complete, %" PRIu64 " records and %" PRIu64 " lost counted%s "
				"in %s", c->m->name, c->m->records, c->m->lost,
				c->m->lost_unknown ? " (and more: a lost marker of an unknown count)" : "",
				c->m->dir);
		else if (!c->m->nr_said)	/* a write error: said, and every retry ends so */
			pr_info("%s: connection from %s ended before the recording did",
				c->m->name, c->peer);
		/*
		 * Its files are closed until the sender is back: two descriptors
		 * a stream must not stay with every name a peer ever sent.  The
		 * next HELLO of this session opens them again where the state
		 * files say.
		 */
		close_machine(c->m);
		c->m->conn = NULL;
	}
	close(c->fd);
	handshake_free(c);
	sodium_memzero(&c->seal, sizeof(c->seal));
	release_payload(col, c);
	if (c->waiting)
		col->nr_waiting--;
	free(c->out);
	free(c);
	col->conns[i] = col->conns[--col->nr_conns];
	col->accept_paused = false;	/* a descriptor is free again */
}

static void accept_conn(struct collector *col, int lfd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	int fd = accept4(lfd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	char host[64] = "?", port[16] = "?";
	struct conn *c;

	if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		       errno == ENOMEM)) {
		/*
		 * A resource running out: the peer waits in the backlog, we go
		 * on, and try again when a connection closes or in a second (the
		 * descriptors may be held by no connection of ours).
		 */
		if (!col->accept_said)
			pr_warn("--listen: %s with %u connections open; new ones wait until one "
				"closes, or a second", strerror(errno), col->nr_conns);
		col->accept_said = true;
		col->accept_paused = true;
		col->accept_retry = now() + ACCEPT_RETRY_S;
		return;
	}
	if (fd < 0)
		return;
	col->accept_said = false;
	getnameinfo((struct sockaddr *)&sa, len, host, sizeof(host), port, sizeof(port),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	c = xcalloc(1, sizeof(*c));
	c->fd = fd;
	c->last_byte = now();
	snprintf(c->peer, sizeof(c->peer), "%s:%s", host, port);
	col->conns = xrealloc(col->conns, (col->nr_conns + 1) * sizeof(*col->conns));
	col->conns[col->nr_conns++] = c;
	pr_debug("%s: connected", c->peer);
}

int collect(const struct ktrace_opts *o)
{
	struct collector col = { .dir = o->output };
	struct sigaction sa = { .sa_handler = on_stop };
	struct ktnet_addr addr;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char host[64] = "", port[16] = "";
	sigset_t block, orig;
	struct rlimit nofile;
	int lfd;

	if (!ktnet_parse_addr(o->listen, &addr, true))
		kt_usage_error("--listen %s: not [ADDR:]PORT", o->listen);
	if (o->key) {
		struct stat sb;
		const char *why;

		ktnet_crypto_init();
		col.key_path = o->key;
		col.key_dir = stat(o->key, &sb) == 0 && S_ISDIR(sb.st_mode);
		if (col.key_dir) {
			int dfd = kt_open_checked_dir(o->key);

			if (dfd < 0)
				die("--key %s: %s", o->key, errno == EPERM ?
				    "another user's, or others may write in it: not a key directory" :
				    strerror(errno));
			close(dfd);
		} else if (ktnet_key_load(o->key, col.key, &why) < 0) {
			die("--key %s: %s", o->key, why);
		}
	}
	/* unauthenticated: nobody beyond this machine, unless an address is asked for */
	if (!*addr.host && !o->key)
		strcpy(addr.host, "127.0.0.1");
	{
		/* ours and nobody else's: every machine's directory is made in it */
		int dfd, err = kt_mkdir_private(col.dir);

		if (err < 0)
			die("-o %s: %s", col.dir, strerror(-err));
		dfd = kt_open_checked_dir(col.dir);
		if (dfd < 0)
			die("-o %s: %s", col.dir, errno == EPERM ?
			    "another user's, or others may write in it: not for a collector" :
			    strerror(errno));
		close(dfd);
	}
	lfd = ktnet_listen(&addr, o->listen);
	/*
	 * A descriptor a stream of every machine sending, one a connection:
	 * the streams get half, so that a peer's many streams leave room for
	 * the connections of the others.
	 */
	col.files_cap = 1u << 30;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
		if (nofile.rlim_cur < nofile.rlim_max) {
			nofile.rlim_cur = nofile.rlim_max;
			setrlimit(RLIMIT_NOFILE, &nofile);
			getrlimit(RLIMIT_NOFILE, &nofile);
		}
		if (nofile.rlim_cur / 2 < col.files_cap)
			col.files_cap = nofile.rlim_cur / 2;
	}
	if (getsockname(lfd, (struct sockaddr *)&ss, &sslen) == 0)
		getnameinfo((struct sockaddr *)&ss, sslen, host, sizeof(host), port, sizeof(port),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	if (!o->key && strncmp(host, "127.", 4) && strcmp(host, "::1"))
		pr_warn("--listen %s: no --key: whoever reaches %s may send as any machine, "
			"and everything travels in clear", o->listen, host);
	col.dz = ZSTD_createDCtx();
	if (!col.dz)
		die("zstd: out of memory");
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* the one line a script waits for, whatever -q says */
	fprintf(stderr, "ktrace: listening on %s port %s, writing into %s\n", host, port, col.dir);

	while (!stop_sig) {
		struct pollfd *pfd = xcalloc(col.nr_conns + 1, sizeof(*pfd));
		unsigned int n = col.nr_conns;
		struct timespec tick = { 1, 0 };	/* for the idle peers */
		bool unsynced = false;
		double t;

		for (unsigned int i = 0; i < col.nr_machines; i++)
			unsynced |= col.machines[i]->unsynced;
		t = now();
		if (!unsynced)
			col.sync_due = t + SYNC_EVERY_S;
		else if (col.sync_due - t < 1)
			tick = (struct timespec){ 0, col.sync_due > t ?
						  (long)((col.sync_due - t) * 1e9) : 0 };

		if (col.accept_paused && now() >= col.accept_retry)
			col.accept_paused = false;
		serve_waiting(&col);
		pfd[0] = (struct pollfd){ .fd = col.accept_paused ? -1 : lfd, .events = POLLIN };
		for (unsigned int i = 0; i < n; i++) {
			struct conn *c = col.conns[i];

			/* one waiting for payload memory is not read (nor polled, if idle) */
			pfd[i + 1] = (struct pollfd){
				.fd = c->waiting && !c->out_len ? -1 : c->fd,
				.events = (c->waiting ? 0 : POLLIN) | (c->out_len ? POLLOUT : 0) };
		}
		if (ppoll(pfd, n + 1, &tick, &orig) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		t = now();
		/* backwards: close_conn() moves the last one into the gap */
		for (unsigned int i = n; i-- > 0; ) {
			struct conn *c = col.conns[i];
			int ret = 0;

			if (pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR) && !c->waiting)
				ret = on_readable(&col, c);
			if (!ret)
				ret = flush(c);
			if (!ret && c->waiting)
				continue;	/* its silence is ours */
			if (!ret && c->reserved && t - c->payload_start > PEER_IDLE_S &&
			    c->got < (t - c->payload_start) * PAYLOAD_MIN_BPS) {
				/* memory held by a peer that does not send what it said */
				pr_warn("%s: a %u-byte message at under %u KiB/s: closed", c->peer,
					c->h.len, PAYLOAD_MIN_BPS >> 10);
				ret = -EPROTO;
			}
			if (!ret && c->reserved && !c->small && col.nr_waiting &&
			    t - c->payload_start > RATE_GRACE_S &&
			    c->h.len - c->got > c->got / (t - c->payload_start) * WAIT_MAX_S) {
				/* the others would wait for it for long: it sends it again */
				pr_warn("%s: a %u-byte message at %.0f KiB/s while others wait for "
					"memory (over %d s more): closed", c->peer, c->h.len,
					c->got / (t - c->payload_start) / 1024, WAIT_MAX_S);
				ret = -EPROTO;
			}
			if (!ret && t - c->last_byte > PEER_IDLE_S) {
				/* a dead peer, or one holding a name or a descriptor */
				pr_warn("%s: nothing for %d s%s: closed", c->peer, PEER_IDLE_S,
					c->have_hdr || c->got ? " in the middle of a message" :
					!c->m ? " and no HELLO" : "");
				ret = -EPROTO;
			}
			if (ret)
				close_conn(&col, i, ret);
		}
		for (unsigned int i = 0; t >= col.sync_due && i < col.nr_machines; i++)
			if (col.machines[i]->unsynced)
				sync_machine(col.machines[i]);
		if (pfd[0].revents & POLLIN)
			accept_conn(&col, lfd);
		free(pfd);
	}
	while (col.nr_conns)
		close_conn(&col, col.nr_conns - 1, -EPIPE);
	for (unsigned int i = 0; i < col.nr_machines; i++) {
		close_machine(col.machines[i]);
		free(col.machines[i]->dir);
		free(col.machines[i]);
	}
	free(col.machines);
	free(col.raw);
	free(col.recs);
	ZSTD_freeDCtx(col.dz);
	sodium_memzero(col.key, sizeof(col.key));
	close(lfd);
	return 0;
}
