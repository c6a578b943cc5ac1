// SPDX-License-Identifier: GPL-2.0
/*
 * send: ktrace --send, a recording streamed to a collector (ktnet.h).
 *
 * The CPU threads of record.c hand each drained chunk to sender_put(),
 * which compresses it into one zstd frame and appends it, as the wire
 * message it will be, to the spool: a directory of segment files
 * (--spool DIR, a temporary one by default) holding every frame until the
 * collector acknowledges it, at most --spool-size bytes.  Nothing there
 * waits for the network: a CPU thread never blocks on the collector, so
 * the kernel's buffers drain as they do into files.  A frame that does not
 * fit is dropped and its records (and the kernel's lost markers in it)
 * counted in the next frame's lost field: the collector writes a
 * KTRACE_META_LOST record there, so nothing is lost without a count.
 *
 * One network thread connects (again and again, with a backoff of 0.1 s
 * doubling to 2 s, while the collector is away), says HELLO, learns what
 * the collector already has, sends the files of the recording (kallsyms,
 * irqs, probes) and every frame after the acknowledged ones, frees the
 * spool's segments once all their frames are acknowledged, sends a clock
 * probe every PROBE_INTERVAL (4 at each connect) and a beacon for each stream
 * idle for a second.  At the end, sender_finish() waits for every frame to
 * be acknowledged, --send-wait seconds at the most.
 *
 * A sender killed leaves its frames in --spool DIR, beside DIR/hello (its
 * HELLO).  The next ktrace --send with that --spool moves them to
 * DIR/unsent.N and, before its own recording's HELLO, says the old HELLO
 * and sends what the collector has not acknowledged of them (a frame cut
 * short by the kill becomes a lost count of its records), so the killed
 * recording is complete at the collector up to what reached the spool.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sodium.h>
#include <unistd.h>
#include <zstd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "files.h"
#include "ktfile.h"
#include "ktnet.h"
#include "ktrace.h"
#include "opts.h"
#include "util.h"

#define SEGMENT_BYTES	(4u << 20)	/* a spool segment file is closed after this */
#define PROBE_INTERVAL	0.25		/* s: dtrace keeps the best of 8 in a row */
#define ZSTD_LEVEL	1		/* ~4x on trace records at several 100 MB/s a core */

/* BASE.SUFFIX: what a recording saves of its machine, sent as FILE messages */
static const char *const file_suffixes[] = { ".kallsyms", ".irqs", ".probes" };

struct send_stream {
	uint32_t id;			/* the CPU */
	ZSTD_CCtx *zc;			/* its CPU thread's */
	void *zbuf, *cols;		/* the frame; the records in columns */
	size_t zcap, ccap;
	/* under sender.lock: */
	uint64_t seq;			/* the last frame's number */
	uint64_t pending_lost;		/* dropped, not yet in a frame */
	uint64_t dropped;		/* dropped in all */
	uint64_t acked;			/* the collector has written up to here */
	uint64_t sent;			/* the highest frame sent (on any connection) */
	uint64_t last_tsc;
	double last_frame;		/* now() of the last frame (beacons) */
	bool maybe_lost;		/* a killed sender's spool: a damaged stretch
					 * since its last frame may have held some */
	uint64_t spool_end;		/* a killed sender's spool: the byte after its
					 * last frame there, counted over the segments */
	bool jump_unbounded;		/* ... and a segment since is missing or
					 * unreadable: any number may come next */
};

/*
 * A frame to send: in a spool segment (@seg, @off, @len), or, @seg
 * NO_SEGMENT, one the spool could not hold or a damaged one stands for:
 * numbers @first_seq..@seq, sent as one empty frame @seq counting @lost.
 * A range of numbers (@first_seq < @seq) always counts KTNET_LOST_UNKNOWN:
 * such a frame may skip numbers (ktnet.h), so a gap costs one frame.
 */
#define NO_SEGMENT	UINT_MAX

struct spool_frame {
	struct spool_frame *next;
	uint32_t stream;		/* index in sender.streams */
	uint64_t seq;			/* the last of its numbers */
	uint64_t first_seq;		/* NO_SEGMENT: the first (else @seq) */
	uint32_t records;
	uint64_t lost;			/* its header's: counted lost if it is damaged */
	uint64_t first_tsc;		/* NO_SEGMENT: the lost marker's time stamp */
	unsigned int seg;
	off_t off;
	uint32_t len;			/* wire bytes: header and payload */
};

struct spool_segment {
	unsigned int nr;		/* its file: spool.NR */
	int fd;
	off_t size;
	unsigned int live;		/* frames not yet acknowledged */
};

struct sender {
	const struct ktrace_opts *o;
	struct ktnet_addr addr;
	struct ktnet_hello hello;
	struct send_stream *streams;
	unsigned int nr;
	char *dir;			/* the spool */
	char *base;			/* DIR/trace: BASE.kallsyms and the like, to send */
	bool own_dir;			/* made by us: removed at the end */
	pthread_t thread;
	pthread_mutex_t lock;
	int wake_fd;			/* eventfd: a frame was spooled, or finish */
	/* under lock: */
	struct spool_segment *segs;
	unsigned int nr_segs, cur_seg;
	uint64_t spool_bytes;
	struct spool_frame *head, *tail, *cursor;	/* cursor: the next to send */
	bool finishing;
	double deadline;
	uint64_t frames, raw_bytes, wire_bytes;	/* sent, for the summary */
	bool undelivered;		/* the thread gave up at the deadline */
	bool disk_warned;		/* said the spool's disk is full */
	bool recovered;			/* a killed sender's spool (DIR/unsent.N) */
	double wait;			/* sender_finish()'s --send-wait */
	struct sender *live;		/* recovered: the recording sending it, which
					 * keeps half its wait (past_deadline()) */
	bool keyed;			/* --key: authenticate, seal the stream */
	uint8_t key[KTNET_KEY_BYTES];
	const char *auth_failed;	/* the last connection's refusal (said once), or NULL */
};

/* The network thread sleeps in poll(): a frame to send, or the end, wakes it. */
static void wake(struct sender *s)
{
	uint64_t one = 1;

	if (write(s->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		die("eventfd: %s", strerror(errno));
}

static uint64_t tsc_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return ktnet_mono_ns();
#endif
}

/*
 * The next segment file.  At the start a failure is fatal; later (a full
 * disk, no descriptors) the current segment goes on growing instead.
 */
static bool segment_new(struct sender *s)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/spool.%u", s->dir, s->nr_segs);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && !s->segs)
		die("--spool %s: %s: %s", s->dir, path, strerror(errno));
	if (fd < 0) {
		if (!s->disk_warned)
			pr_warn("--spool %s: %s: %s: the current segment goes on", s->dir, path,
				strerror(errno));
		s->disk_warned = true;
		return false;
	}
	s->segs = xrealloc(s->segs, (s->nr_segs + 1) * sizeof(*s->segs));
	s->segs[s->nr_segs] = (struct spool_segment){ .nr = s->nr_segs, .fd = fd };
	s->cur_seg = s->nr_segs++;
	return true;
}

static void segment_free(struct sender *s, unsigned int i)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/spool.%u", s->dir, s->segs[i].nr);
	close(s->segs[i].fd);
	unlink(path);
	s->spool_bytes -= s->segs[i].size;
	s->segs[i].fd = -1;
}

/* Frames at the head that are acknowledged leave the spool (under lock). */
static void spool_trim(struct sender *s)
{
	while (s->head && s->head != s->cursor &&
	       s->head->seq <= s->streams[s->head->stream].acked) {
		struct spool_frame *f = s->head;
		struct spool_segment *seg;

		s->head = f->next;
		if (!s->head)
			s->tail = NULL;
		if (f->seg == NO_SEGMENT) {
			free(f);
			continue;
		}
		seg = &s->segs[f->seg];
		if (!--seg->live && f->seg != s->cur_seg) {
			segment_free(s, f->seg);
		} else if (!seg->live && ftruncate(seg->fd, 0) == 0) {
			/* the current segment, all acknowledged: start it over */
			s->spool_bytes -= seg->size;
			seg->size = 0;
		}
		free(f);
	}
}

/* Records a dropped chunk stands for: its events and its lost markers' counts. */
static uint64_t records_in(const struct ktrace_record *recs, size_t nr)
{
	uint64_t n = 0;

	for (size_t i = 0; i < nr; i++)
		n += recs[i].event == KTRACE_META_LOST ?
		     (recs[i].arg1 | (uint64_t)recs[i].arg2 << 32) : 1;
	return n;
}

void sender_put(struct sender *s, unsigned int idx, const struct ktrace_record *recs,
		size_t nr)
{
	struct send_stream *st = &s->streams[idx];
	size_t raw = nr * sizeof(*recs), zlen = 0, need = ZSTD_compressBound(raw);
	struct ktnet_hdr h = { .type = KTNET_DATA, .stream = st->id, .records = nr };
	uint8_t wire[KTNET_HDR_SIZE];
	struct spool_frame *f;
	struct spool_segment *seg;

	if (nr) {
		if (need > st->zcap) {
			st->zbuf = xrealloc(st->zbuf, need);
			st->zcap = need;
		}
		if (raw > st->ccap) {
			st->cols = xrealloc(st->cols, raw);
			st->ccap = raw;
		}
		ktnet_to_columns(st->cols, recs, nr);
		zlen = ZSTD_compressCCtx(st->zc, st->zbuf, st->zcap, st->cols, raw, ZSTD_LEVEL);
		if (ZSTD_isError(zlen))
			die("zstd: %s", ZSTD_getErrorName(zlen));
		h.first_tsc = recs[0].tsc;
		h.last_tsc = recs[nr - 1].tsc;
	}
	h.len = zlen;

	pthread_mutex_lock(&s->lock);
	/* an empty frame (a lost count only) always goes in */
	if (nr && s->spool_bytes + KTNET_HDR_SIZE + zlen > s->o->spool_size) {
		uint64_t n = records_in(recs, nr);

		st->pending_lost += n;
		st->dropped += n;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	h.seq = st->seq + 1;
	h.lost = st->pending_lost;
	if (!nr)
		h.first_tsc = h.last_tsc = st->last_tsc;
	ktnet_encode(wire, &h);
	seg = &s->segs[s->cur_seg];
	f = xcalloc(1, sizeof(*f));
	*f = (struct spool_frame){ .stream = idx, .seq = h.seq, .first_seq = h.seq, .records = nr,
				   .lost = h.lost, .first_tsc = h.first_tsc, .seg = s->cur_seg,
				   .off = seg->size, .len = sizeof(wire) + zlen };
	errno = 0;
	if (pwrite(seg->fd, wire, sizeof(wire), seg->size) != sizeof(wire) ||
	    (zlen && pwrite(seg->fd, st->zbuf, zlen, seg->size + sizeof(wire)) != (ssize_t)zlen)) {
		/* a full disk is a full spool */
		uint64_t n = records_in(recs, nr);

		if (!s->disk_warned)
			pr_warn("--spool %s: %s: records are dropped and counted lost", s->dir,
				strerror(errno ? errno : ENOSPC));
		s->disk_warned = true;
		/* no half frame left behind for a later run to read back */
		if (ftruncate(seg->fd, seg->size) < 0)
			errno = 0;
		if (nr) {
			free(f);
			st->pending_lost += n;
			st->dropped += n;
			pthread_mutex_unlock(&s->lock);
			return;
		}
		/*
		 * The last lost count (sender_finish): no later frame could carry
		 * it, so it waits in memory to be sent (lost only with a kill).
		 */
		f->seg = NO_SEGMENT;
		f->len = 0;
	} else {
		seg->size += f->len;
		seg->live++;
		s->spool_bytes += f->len;
	}
	st->seq = h.seq;
	st->pending_lost = 0;
	if (nr)
		st->last_tsc = h.last_tsc;
	st->last_frame = now();
	s->raw_bytes += raw;
	if (s->tail)
		s->tail->next = f;
	else
		s->head = f;
	s->tail = f;
	if (!s->cursor)
		s->cursor = f;
	if (seg->size >= SEGMENT_BYTES || (uint64_t)seg->size >= s->o->spool_size / 4) {
		unsigned int old = s->cur_seg;

		if (segment_new(s) && !s->segs[old].live)
			segment_free(s, old);
	}
	pthread_mutex_unlock(&s->lock);
	wake(s);
}

/* BASE.kallsyms, .irqs, .probes, as the recording wrote them into the spool. */
static int send_files(struct sender *s, struct ktnet_chan *ch)
{
	const char *const *suffixes = file_suffixes;
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(file_suffixes) && !ret; i++) {
		char path[4096];
		struct stat st;
		void *raw, *z;
		size_t zcap, zlen, nlen = strlen(suffixes[i]) + 1;
		int in;

		snprintf(path, sizeof(path), "%s/trace%s", s->dir, suffixes[i]);
		in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (in < 0)
			continue;
		if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > KTNET_PAYLOAD_MAX) {
			close(in);
			continue;
		}
		raw = xmalloc(st.st_size + 1);
		if (ktnet_read_all(in, raw, st.st_size) < 0) {
			close(in);
			free(raw);
			continue;
		}
		close(in);
		zcap = ZSTD_compressBound(st.st_size) + nlen;
		z = xmalloc(zcap);
		memcpy(z, suffixes[i], nlen);
		zlen = ZSTD_compress((char *)z + nlen, zcap - nlen, raw, st.st_size, 3);
		if (!ZSTD_isError(zlen) && zlen + nlen <= KTNET_PAYLOAD_MAX) {
			struct ktnet_hdr h = { .type = KTNET_FILE, .stream = KTNET_STREAM_NONE,
					       .len = zlen + nlen };

			ret = ktnet_chan_send(ch, &h, z);
		}
		free(raw);
		free(z);
	}
	return ret;
}

static int send_probe(struct ktnet_chan *ch)
{
	struct ktnet_hdr h = { .type = KTNET_PROBE, .stream = KTNET_STREAM_NONE };

	ktnet_t(&h, 0) = ktnet_mono_ns();
	return ktnet_chan_send(ch, &h, NULL);
}

/*
 * An ACK: frames of stream @h->stream up to @h->seq are written.  The
 * collector is not trusted: an ACK of a frame never sent (that would free
 * it from the spool unsent) is a protocol error (under lock).  A killed
 * sender's spool (@in_hello, what the collector holds of it) may have been
 * sent by that sender: up to its last frame there, or anything if none of
 * the stream's frames are left in it (all acknowledged and freed).
 */
static int take_ack(struct sender *s, const struct ktnet_hdr *h, bool in_hello)
{
	for (unsigned int i = 0; i < s->nr; i++) {
		struct send_stream *st = &s->streams[i];

		if (st->id != h->stream)
			continue;
		if (s->recovered && in_hello && !st->seq)
			st->seq = h->seq;
		if (s->recovered && in_hello && h->seq <= st->seq && h->seq > st->sent)
			st->sent = h->seq;
		if (h->seq > st->sent) {
			pr_warn("--send %s:%s: the collector acknowledges frame %llu of cpu %u, "
				"only %llu sent", s->addr.host, s->addr.port,
				(unsigned long long)h->seq, h->stream, (unsigned long long)st->sent);
			return -EPROTO;
		}
		if (h->seq > st->acked)
			st->acked = h->seq;
		return 0;
	}
	pr_warn("--send %s:%s: the collector acknowledges cpu %u, not a stream of ours",
		s->addr.host, s->addr.port, h->stream);
	return -EPROTO;
}

/* HELLO's payload (@len bytes): the hello, the stream ids; DIR/hello keeps it too. */
static uint8_t *hello_payload(const struct sender *s, size_t *len)
{
	uint8_t *payload;

	*len = sizeof(s->hello) + s->nr * sizeof(uint32_t);
	payload = xmalloc(*len);
	memcpy(payload, &s->hello, sizeof(s->hello));
	for (unsigned int i = 0; i < s->nr; i++) {
		uint32_t id = htole32(s->streams[i].id);

		memcpy(payload + sizeof(s->hello) + i * 4, &id, 4);
	}
	return payload;
}

static void recovered_fixup(struct sender *s);

/*
 * Not authenticated: said (once while it stays the same), -EACCES.  It is
 * tried again as any failed connection (a key may be added at the
 * collector meanwhile, and a peer on the path could fake this answer):
 * until --send-wait, then the frames stay in the spool.
 */
static int auth_error(struct sender *s, const char *why)
{
	if (s->auth_failed != why)
		pr_err("--send %s:%s: as %s: %s", s->addr.host, s->addr.port, s->hello.name, why);
	s->auth_failed = why;
	return -EACCES;
}

/* The collector's REFUSE. */
static int refused(struct sender *s, const struct ktnet_hdr *h)
{
	static const char *const why[] = {
		[KTNET_REFUSE_KEY_WANTED] = "the collector wants a key: give --key FILE, "
					    "the key it has for this machine",
		[KTNET_REFUSE_NO_KEY] = "the collector has no key (started without --key): "
					"it cannot prove it is ours",
		[KTNET_REFUSE_UNKNOWN_NAME] = "the collector has no key for this machine's "
					      "name (NAME.key in its --key directory)",
		[KTNET_REFUSE_BAD_PROOF] = "the collector refused our proof of the key",
	};

	return auth_error(s, h->seq < ARRAY_SIZE(why) && why[h->seq] ? why[h->seq] :
			  "the collector refused us, saying no known reason");
}

/*
 * --key: AUTH, the collector's CHALLENGE checked (it proves the key
 * first: a collector with another key is told apart from one that drops
 * us), then our PROOF; everything after is sealed.  -EACCES: refused.
 */
static int authenticate(struct sender *s, struct ktnet_chan *ch)
{
	struct ktnet_auth a = { 0 };
	struct ktnet_challenge c;
	struct ktnet_proofs p = { 0 };
	struct ktnet_hdr h = { .type = KTNET_AUTH, .stream = KTNET_STREAM_NONE, .len = sizeof(a) };
	const char *bad;
	int ret;

	memcpy(a.name, s->hello.name, sizeof(a.name));
	ktnet_nonce(a.nonce);
	if ((ret = ktnet_chan_send(ch, &h, &a)))
		return ret;
	bad = ktnet_chan_recv(ch, &h, &ret);
	if (!bad && !ret && h.type == KTNET_REFUSE)
		return refused(s, &h);
	if (!bad && !ret && h.type != KTNET_CHALLENGE)
		bad = "an answer to AUTH that is no CHALLENGE";
	if (!bad && !ret && (ret = ktnet_read_all(ch->fd, &c, sizeof(c))) == 0) {
		memcpy(p.name, s->hello.name, sizeof(p.name));
		memcpy(p.sender_nonce, a.nonce, sizeof(a.nonce));
		memcpy(p.collector_nonce, c.nonce, sizeof(c.nonce));
		ktnet_proofs(&p, s->key);
		if (!ktnet_mac_equal(c.mac, p.collector_mac)) {
			sodium_memzero(&p, sizeof(p));
			return auth_error(s, "the collector does not prove our key: its key for "
					  "this machine is another (or it is not our collector)");
		}
		h = (struct ktnet_hdr){ .type = KTNET_PROOF, .stream = KTNET_STREAM_NONE,
					.len = KTNET_MAC_BYTES };
		ret = ktnet_chan_send(ch, &h, p.sender_mac);
		ktnet_seal_start(&ch->seal, s->key, &p, false);
	}
	sodium_memzero(&p, sizeof(p));
	if (bad) {
		pr_warn("--send %s:%s: %s (an older collector, or not one?)", s->addr.host,
			s->addr.port, bad);
		return -EPROTO;
	}
	return ret;
}

/* (AUTH and PROOF,) HELLO, then the collector's ACKs up to the one for KTNET_STREAM_NONE. */
static int handshake(struct sender *s, struct ktnet_chan *ch)
{
	size_t len;
	uint8_t *payload;
	struct ktnet_hdr h;
	int ret = s->keyed ? authenticate(s, ch) : 0;

	if (ret)
		return ret;
	payload = hello_payload(s, &len);
	h = (struct ktnet_hdr){ .type = KTNET_HELLO, .stream = KTNET_STREAM_NONE, .len = len };
	ret = ktnet_chan_send(ch, &h, payload);
	free(payload);
	/* one ACK a stream at most, then the end of the list */
	for (unsigned int acks = 0; !ret; acks++) {
		const char *bad = ktnet_chan_recv(ch, &h, &ret);

		if (ret && !bad)
			break;
		/* in clear, to a sender without a key (a sealed one proved the key) */
		if (!bad && h.type == KTNET_REFUSE && !ch->seal.on)
			return refused(s, &h);
		if (bad || h.type != KTNET_ACK || h.len || acks > s->nr) {
			pr_warn("--send %s:%s: %s", s->addr.host, s->addr.port,
				bad ? bad : "unexpected answer to HELLO");
			return -EPROTO;
		}
		if (h.stream == KTNET_STREAM_NONE) {
			if (s->recovered) {
				pthread_mutex_lock(&s->lock);
				recovered_fixup(s);
				pthread_mutex_unlock(&s->lock);
			}
			break;
		}
		pthread_mutex_lock(&s->lock);
		ret = take_ack(s, &h, true);
		pthread_mutex_unlock(&s->lock);
	}
	if (!ret)
		s->auth_failed = NULL;	/* taken: a refusal later is said again */
	if (!ret)
		ret = send_files(s, ch);
	for (int i = 0; i < 4 && !ret; i++)
		ret = send_probe(ch);
	return ret;
}

/* One message from the collector: an ACK or a probe's reply. */
static int receive(struct sender *s, struct ktnet_chan *ch)
{
	struct ktnet_hdr h;
	int ret;
	const char *bad = ktnet_chan_recv(ch, &h, &ret);

	if (!bad && !ret && h.len)
		bad = "a message with a payload";
	if (bad) {
		pr_warn("--send %s:%s: %s", s->addr.host, s->addr.port, bad);
		return -EPROTO;
	}
	if (ret)
		return ret;
	if (h.type == KTNET_PROBE_REPLY) {
		uint64_t t4 = ktnet_mono_ns();

		h.type = KTNET_CLOCK;
		ktnet_t(&h, 3) = t4;
		return ktnet_chan_send(ch, &h, NULL);
	}
	if (h.type != KTNET_ACK)
		return 0;
	pthread_mutex_lock(&s->lock);
	ret = take_ack(s, &h, false);
	spool_trim(s);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* The next frame not yet acknowledged, from the cursor on (under lock). */
static struct spool_frame *next_to_send(struct sender *s)
{
	while (s->cursor && s->cursor->seq <= s->streams[s->cursor->stream].acked)
		s->cursor = s->cursor->next;
	return s->cursor;
}

static bool all_acked(struct sender *s)
{
	for (unsigned int i = 0; i < s->nr; i++)
		if (s->streams[i].acked < s->streams[i].seq)
			return false;
	return true;
}

/*
 * One empty frame numbered @f->seq counting @lost: a frame the spool could
 * not hold, one found damaged in it, or a range of numbers a damaged spool
 * lost.  A range counts KTNET_LOST_UNKNOWN (also when the collector holds
 * its first numbers, @from being the first it lacks: the rest are lost),
 * and such a frame may skip numbers (ktnet.h): however wide the gap, it is
 * one frame, so a damaged number costs no more time than any other frame.
 */
static int send_empty(struct sender *s, struct ktnet_chan *ch, const struct spool_frame *f,
		      uint64_t from, uint64_t lost)
{
	struct ktnet_hdr h = { .type = KTNET_DATA, .stream = s->streams[f->stream].id,
			       .seq = f->seq, .first_tsc = f->first_tsc, .last_tsc = f->first_tsc,
			       .lost = f->first_seq < f->seq ? KTNET_LOST_UNKNOWN : lost };

	if (from > f->seq)
		return 0;
	return ktnet_chan_send(ch, &h, NULL);
}

/*
 * A DATA frame's payload is what its header says: one zstd frame of
 * exactly @len bytes making @records records (the collector refuses a
 * frame that is not, and would refuse it again on every reconnect).
 */
static bool payload_ok(const struct ktnet_hdr *h, const void *payload)
{
	if (!h->records)
		return !h->len;
	return h->len && ZSTD_getFrameContentSize(payload, h->len) ==
			 (unsigned long long)h->records * sizeof(struct ktrace_record) &&
	       ZSTD_findFrameCompressedSize(payload, h->len) == h->len;
}

static int send_frame(struct sender *s, struct ktnet_chan *ch, struct spool_frame *f)
{
	struct spool_segment seg = { .fd = -1 };
	struct ktnet_hdr h;
	uint64_t from;
	uint8_t *buf;
	int ret;

	/* under the lock: a CPU thread's segment_new() may move s->segs */
	pthread_mutex_lock(&s->lock);
	from = s->streams[f->stream].acked + 1;
	if (f->seg != NO_SEGMENT)
		seg = s->segs[f->seg];
	pthread_mutex_unlock(&s->lock);
	if (f->seg == NO_SEGMENT)
		return send_empty(s, ch, f, from, f->lost);
	buf = xmalloc(f->len);
	/* read back as written: else its records are counted lost, as we know them */
	errno = 0;
	if (pread(seg.fd, buf, f->len, f->off) != (ssize_t)f->len || ktnet_decode(&h, buf) ||
	    h.type != KTNET_DATA || h.stream != s->streams[f->stream].id || h.seq != f->seq ||
	    h.len != f->len - KTNET_HDR_SIZE || h.records != f->records ||
	    !payload_ok(&h, buf + KTNET_HDR_SIZE)) {
		pr_warn("--spool %s: spool.%u: frame %llu of cpu %u damaged%s%s: its %u records "
			"are counted lost", s->dir, seg.nr, (unsigned long long)f->seq,
			s->streams[f->stream].id, errno ? ": " : "", errno ? strerror(errno) : "",
			f->records);
		free(buf);
		return send_empty(s, ch, f, from, f->lost > KTNET_LOST_UNKNOWN - f->records ?
						    KTNET_LOST_UNKNOWN : f->lost + f->records);
	}
	ret = ktnet_chan_write(ch, buf, f->len);
	free(buf);
	return ret;
}

/*
 * Time to give up: --send-wait after the end.  An earlier recording's
 * frames (@s->live set) are sent before the live recording's: they stop
 * half the live one's wait after its end, so that a spool that cannot be
 * delivered never takes the whole wait from the recording just made.
 */
static bool past_deadline(struct sender *s)
{
	double t = now();
	bool past;

	pthread_mutex_lock(&s->lock);
	past = s->finishing && t >= s->deadline;
	pthread_mutex_unlock(&s->lock);
	if (!past && s->live) {
		pthread_mutex_lock(&s->live->lock);
		past = s->live->finishing && t >= s->live->deadline - s->live->wait / 2;
		pthread_mutex_unlock(&s->live->lock);
	}
	return past;
}

/*
 * The collector's messages waiting on @fd, up to a bound (the frames wait
 * meanwhile): one ACK comes for each frame sent, and a collector closes a
 * connection whose ACKs are left unread.
 */
static int receive_waiting(struct sender *s, struct ktnet_chan *ch)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int ret = receive(s, ch);

	for (int n = 1; !ret && n < 256 && poll(&pfd, 1, 0) > 0; n++)
		ret = receive(s, ch);
	return ret;
}

/* Stream the spool over one connection until it fails or all is done. */
static int stream(struct sender *s, struct ktnet_chan *ch)
{
	double next_probe = now() + PROBE_INTERVAL, next_beacon = now() + 1;

	for (;;) {
		struct spool_frame *f;
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		bool done;
		int ret;

		struct pollfd wake = { .fd = s->wake_fd, .events = POLLIN };
		uint64_t count;

		pthread_mutex_lock(&s->lock);
		f = next_to_send(s);
		done = s->finishing && all_acked(s);
		pthread_mutex_unlock(&s->lock);
		/* a collector that takes frames but never acknowledges them */
		if (!done && past_deadline(s))
			return -ETIMEDOUT;
		if (done) {
			/* BASE.probes is written once the command starts: again at the end */
			if ((ret = send_files(s, ch)))
				return ret;
			for (unsigned int i = 0; i < s->nr; i++) {
				struct ktnet_hdr h = { .type = KTNET_END, .stream = s->streams[i].id,
						       .seq = s->streams[i].seq };

				if ((ret = ktnet_chan_send(ch, &h, NULL)))
					return ret;
			}
			return 0;
		}
		if (f)
			pfd.events |= POLLOUT;
		/* nothing to send: sleep until a frame, an ack or the next probe */
		if (!f) {
			struct pollfd both[2] = { pfd, wake };
			int ms = (int)((next_probe - now()) * 1000) + 1;

			if (poll(both, 2, ms < 1 ? 1 : ms) < 0 && errno != EINTR)
				return -errno;
			pfd.revents = both[0].revents;
			if (both[1].revents && read(s->wake_fd, &count, sizeof(count)) < 0)
				count = 0;
		} else if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			return -errno;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			if ((ret = receive_waiting(s, ch)))
				return ret;
		}
		if (f && (pfd.revents & POLLOUT)) {
			if ((ret = send_frame(s, ch, f)))
				return ret;
			pthread_mutex_lock(&s->lock);
			if (s->cursor == f)
				s->cursor = f->next;
			if (f->seq > s->streams[f->stream].sent)
				s->streams[f->stream].sent = f->seq;
			s->frames++;
			s->wire_bytes += f->len;
			pthread_mutex_unlock(&s->lock);
		}
		if (now() >= next_probe) {
			next_probe = now() + PROBE_INTERVAL;
			if ((ret = send_probe(ch)))
				return ret;
		}
		if (now() >= next_beacon) {
			double t = now();

			next_beacon = t + 1;
			for (unsigned int i = 0; i < s->nr; i++) {
				struct ktnet_hdr h = { .type = KTNET_BEACON, .stream = s->streams[i].id };
				bool idle;

				pthread_mutex_lock(&s->lock);
				idle = t - s->streams[i].last_frame > 1 && !next_to_send(s);
				h.seq = s->streams[i].seq;
				pthread_mutex_unlock(&s->lock);
				h.first_tsc = tsc_now();
				if (idle && (ret = ktnet_chan_send(ch, &h, NULL)))
					return ret;
			}
		}
	}
}

/* Connect, say HELLO, send the spool until END: true when done, false at the deadline. */
static bool deliver(struct sender *s)
{
	double backoff = 0.1, since;
	bool told = false, said_again = false;

	while (!past_deadline(s)) {
		const char *why = NULL;
		int fd = ktnet_connect(&s->addr, &why), ret;
		struct ktnet_chan ch = { .fd = fd };
		struct timespec ts;

		if (fd >= 0) {
			struct timeval tv = { 10, 0 };	/* a collector that stopped reading */

			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			since = now();
			pthread_mutex_lock(&s->lock);
			s->cursor = s->head;
			pthread_mutex_unlock(&s->lock);
			ret = handshake(s, &ch);
			/* taken (a connect the collector refuses is no coming back) */
			if (!ret && told && !said_again)
				pr_info("--send %s:%s: connected again", s->addr.host, s->addr.port);
			if (!ret)
				said_again = told;
			if (!ret)
				ret = stream(s, &ch);
			if (!ret) {
				/* END sent: the collector closes when it has read it */
				char c;

				shutdown(fd, SHUT_WR);
				while (read(fd, &c, 1) > 0)
					;
				ktnet_chan_close(&ch);
				return true;
			}
			ktnet_chan_close(&ch);
			why = ret == -EACCES ? "not authenticated (said above)" : strerror(-ret);
			/*
			 * A collector that takes us and closes at once (its disk full,
			 * say) is retried as one that is away: backing off, said once.
			 */
			if (now() - since > 2) {
				told = said_again = false;
				backoff = 0.1;
			}
		}
		if (!told)
			pr_warn("--send %s:%s: %s; spooling in %s and trying again", s->addr.host,
				s->addr.port, why, s->dir);
		told = true;
		ts = to_timespec(backoff);
		nanosleep(&ts, NULL);
		backoff = backoff * 2 > 2 ? 2 : backoff * 2;
	}
	return false;
}

static void resend_unsent(struct sender *s);

static void *net_thread(void *arg)
{
	struct sender *s = arg;

	/* a killed sender's recording first: the collector keeps them in order */
	resend_unsent(s);
	if (!deliver(s)) {
		pthread_mutex_lock(&s->lock);
		s->undelivered = true;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

/* DIR/NAME, as a new string */
static char *in_dir(const char *dir, const char *name)
{
	char *p = xmalloc(strlen(dir) + strlen(name) + 2);

	sprintf(p, "%s/%s", dir, name);
	return p;
}

/* What a recording leaves in its spool: its HELLO, segments, BASE files. */
static bool is_spool_file(const char *name)
{
	if (!strcmp(name, "hello") || (!strncmp(name, "spool.", 6) &&
				       strspn(name + 6, "0123456789") == strlen(name + 6)))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(file_suffixes); i++)
		if (!strncmp(name, "trace", 5) && !strcmp(name + 5, file_suffixes[i]))
			return true;
	return false;
}

/* The spool's files gone: all delivered. */
static void spool_remove(struct sender *s)
{
	DIR *d;
	struct dirent *e;

	for (unsigned int i = 0; i < s->nr_segs; i++)
		if (s->segs[i].fd >= 0)
			segment_free(s, i);
	d = opendir(s->dir);
	while (d && (e = readdir(d))) {
		if (is_spool_file(e->d_name)) {
			char *p = in_dir(s->dir, e->d_name);

			unlink(p);
			free(p);
		}
	}
	if (d)
		closedir(d);
	if (s->own_dir || s->recovered)
		rmdir(s->dir);
}

/*
 * A recording's files in --spool DIR that a killed sender left: moved to
 * DIR/unsent.N (N one more than any there) for resend_unsent().
 */
static void spool_set_aside(const char *dir)
{
	unsigned long next = 0;
	bool any = false;
	struct dirent *e;
	char name[32], *aside;
	DIR *d = opendir(dir);

	if (!d)
		die("--spool %s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, "unsent.", 7) && strtoul(e->d_name + 7, NULL, 10) >= next)
			next = strtoul(e->d_name + 7, NULL, 10) + 1;
		any |= is_spool_file(e->d_name);
	}
	if (!any) {
		closedir(d);
		return;
	}
	for (;;) {	/* a name of the highest N + 1 taken (wrapped) goes on */
		snprintf(name, sizeof(name), "unsent.%lu", next++);
		aside = in_dir(dir, name);
		if (mkdir(aside, 0700) == 0)
			break;
		if (errno != EEXIST || next > 1000000)
			die("--spool %s: %s: %s", dir, aside, strerror(errno));
		free(aside);
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		char *from, *to;

		if (!is_spool_file(e->d_name))
			continue;
		from = in_dir(dir, e->d_name);
		to = in_dir(aside, e->d_name);
		if (rename(from, to) < 0)
			die("--spool %s: moving %s to %s: %s", dir, from, to, strerror(errno));
		free(from);
		free(to);
	}
	closedir(d);
	pr_info("--spool %s: an earlier recording's frames (its sender killed?) are in %s: "
		"they go to the collector first", dir, aside);
	free(aside);
}

/* A frame to send, appended to the list (under lock, or before the thread runs). */
static struct spool_frame *frame_append(struct sender *s, const struct spool_frame *tmpl)
{
	struct spool_frame *f = xmalloc(sizeof(*f));

	*f = *tmpl;
	f->next = NULL;
	if (s->tail)
		s->tail->next = f;
	else
		s->head = f;
	s->tail = f;
	return f;
}

/* lost + records, or KTNET_LOST_UNKNOWN past it (a header's lost may be anything) */
static uint64_t lost_plus(uint64_t lost, uint64_t records)
{
	return lost >= KTNET_LOST_UNKNOWN - records ? KTNET_LOST_UNKNOWN : lost + records;
}

/*
 * Stream @idx of a killed sender's spool goes on at frame @seq: the numbers
 * before it that a damaged stretch took become one lost marker of unknown
 * count (and empty frames), so the collector takes what follows.
 */
static void recovered_gap(struct sender *s, unsigned int idx, uint64_t seq, uint64_t tsc)
{
	struct send_stream *st = &s->streams[idx];

	if (seq <= st->seq + 1)
		return;
	frame_append(s, &(struct spool_frame){ .stream = idx, .first_seq = st->seq + 1,
					       .seq = seq - 1, .lost = KTNET_LOST_UNKNOWN,
					       .first_tsc = tsc, .seg = NO_SEGMENT });
	pr_warn("--spool %s: cpu %u: frames %llu to %llu are not in the spool (damaged): "
		"counted lost, how many records unknown", s->dir, st->id,
		(unsigned long long)(st->seq + 1), (unsigned long long)(seq - 1));
	st->seq = seq - 1;
}

/*
 * A segment of a killed sender's spool missing or unreadable: frames of any
 * numbers may have been there, the next of each stream may jump.
 */
static void spool_hole(struct sender *s)
{
	for (unsigned int i = 0; i < s->nr; i++)
		s->streams[i].jump_unbounded = true;
}

enum spooled { SPOOLED_OK, SPOOLED_CUT, SPOOLED_DAMAGED, SPOOLED_NONE };

/*
 * What is at byte @off of a killed sender's segment (@map, @size bytes):
 * a whole frame its header describes (header, stream and number sane,
 * payload a zstd frame that makes its records), one whose header is sane
 * but cut short by the end of the file or with a damaged payload (@h and
 * @idx set), or no frame.  The payload is decompressed: a frame found by
 * scanning damaged bytes is a real one.  Its number must be plausible:
 * above the stream's last one there, and skipping (through damaged bytes)
 * no more numbers than frames fit between the two.  A spool holds each
 * stream's frames in order and numbered without gaps (a frame that does
 * not fit gets no number; a segment is freed, the current one started
 * over, only when every frame before it is acknowledged), so a wider jump
 * is a damaged number: trusted, it would leave every later frame of the
 * stream below it.  Before a stream's first frame there, or after a
 * missing segment, any number is plausible.
 */
static enum spooled spooled_at(struct sender *s, const uint8_t *map, off_t size, off_t off,
			       struct ktnet_hdr *h, unsigned int *idx, ZSTD_DCtx *dz,
			       void **scratch, size_t *cap)
{
	const uint8_t *payload = map + off + KTNET_HDR_SIZE;
	uint64_t at = s->spool_bytes + off;	/* over the segments read */
	struct send_stream *st;
	size_t raw;

	if (off + KTNET_HDR_SIZE > size || ktnet_decode(h, map + off) || h->type != KTNET_DATA)
		return SPOOLED_NONE;
	for (*idx = 0; *idx < s->nr && s->streams[*idx].id != h->stream; (*idx)++)
		;
	if (*idx == s->nr)
		return SPOOLED_NONE;
	st = &s->streams[*idx];
	if (h->seq <= st->seq || (st->seq && !st->jump_unbounded &&
				  h->seq - st->seq - 1 > (at - st->spool_end) / KTNET_HDR_SIZE))
		return SPOOLED_NONE;
	if (h->len > size - off - KTNET_HDR_SIZE)
		return SPOOLED_CUT;
	if (!payload_ok(h, payload))
		return SPOOLED_DAMAGED;
	raw = (size_t)h->records * sizeof(struct ktrace_record);
	if (raw > *cap) {
		*scratch = xrealloc(*scratch, raw);
		*cap = raw;
	}
	if (raw && ZSTD_decompressDCtx(dz, *scratch, raw, payload, h->len) != raw)
		return SPOOLED_DAMAGED;
	return SPOOLED_OK;
}

/*
 * The frames of segment @n (file @fd) of a killed sender's spool, in
 * order.  A frame the kill cut short, or one whose payload is damaged,
 * becomes an empty one of its number counting its records (and its lost
 * count) lost; a header cut short had no number yet.  After damage the
 * next whole frame is looked for byte by byte; the numbers skipped on the
 * way are counted lost, how many records unknown (recovered_gap(), and
 * recovered_fixup() for a stream with no frame after it).
 */
static void spool_read_segment(struct sender *s, unsigned int n, int fd)
{
	off_t off = 0, size;
	ZSTD_DCtx *dz = ZSTD_createDCtx();
	void *scratch = NULL;
	size_t cap = 0;
	struct stat st;
	uint8_t *map;

	if (!dz)
		die("zstd: out of memory");
	if (fstat(fd, &st) < 0)
		spool_hole(s);
	/* else empty (started over), or a header the kill cut short: no frame */
	if (fstat(fd, &st) < 0 || st.st_size < KTNET_HDR_SIZE) {
		ZSTD_freeDCtx(dz);
		return;
	}
	size = st.st_size;
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		pr_warn("--spool %s: spool.%u: %s: left out", s->dir, s->segs[n].nr, strerror(errno));
		spool_hole(s);
		ZSTD_freeDCtx(dz);
		return;
	}
	while (off + KTNET_HDR_SIZE <= size) {
		struct ktnet_hdr h = { 0 };
		unsigned int idx = 0;
		enum spooled what = spooled_at(s, map, size, off, &h, &idx, dz, &scratch, &cap);
		off_t from = off + 1, next;	/* where to look for the next frame; found */
		uint32_t len = h.len;		/* the damaged frame's payload, by its header */
		struct send_stream *sst = &s->streams[idx < s->nr ? idx : 0];
		const uint8_t *hit;
		bool unaccounted;

		if (what != SPOOLED_NONE && sst->seq)
			recovered_gap(s, idx, h.seq, sst->last_tsc);
		if (what == SPOOLED_OK) {
			frame_append(s, &(struct spool_frame){ .stream = idx, .seq = h.seq,
							       .first_seq = h.seq, .records = h.records,
							       .lost = h.lost, .first_tsc = h.first_tsc,
							       .seg = n, .off = off,
							       .len = KTNET_HDR_SIZE + h.len });
			s->segs[n].live++;
			sst->seq = h.seq;
			sst->last_tsc = h.records ? h.last_tsc : h.first_tsc;
			sst->maybe_lost = false;
			sst->spool_end = s->spool_bytes + off + KTNET_HDR_SIZE + h.len;
			sst->jump_unbounded = false;
			off += KTNET_HDR_SIZE + h.len;
			continue;
		}
		if (what != SPOOLED_NONE) {
			frame_append(s, &(struct spool_frame){ .stream = idx, .seq = h.seq,
							       .first_seq = h.seq,
							       .lost = lost_plus(h.lost, h.records),
							       .first_tsc = h.first_tsc,
							       .seg = NO_SEGMENT });
			pr_info("--spool %s: spool.%u: frame %llu of cpu %u %s: its %u records are "
				"counted lost", s->dir, s->segs[n].nr, (unsigned long long)h.seq,
				h.stream, what == SPOOLED_CUT ? "cut short" : "damaged", h.records);
			sst->seq = h.seq;
			sst->last_tsc = h.first_tsc;
			sst->maybe_lost = false;
			/* its length may be damaged: at least its header was there */
			sst->spool_end = s->spool_bytes + off + KTNET_HDR_SIZE;
			sst->jump_unbounded = false;
			from = off + KTNET_HDR_SIZE;
		}
		/* the next whole frame after it, if any */
		for (hit = map + from; (hit = memmem(hit, map + size - hit, KTNET_MAGIC, 4)); hit++)
			if (spooled_at(s, map, size, hit - map, &h, &idx, dz, &scratch,
				       &cap) == SPOOLED_OK)
				break;
		/*
		 * Bytes no frame accounts for: any stream may have lost frames
		 * there.  Not so the rest of a frame the kill cut short, nor a
		 * header cut short after a damaged payload.
		 */
		next = hit ? hit - map : size;
		if (what == SPOOLED_NONE)
			unaccounted = true;
		else if (what == SPOOLED_CUT)
			unaccounted = hit;
		else
			unaccounted = next - from > (off_t)len + (hit ? 0 : KTNET_HDR_SIZE - 1);
		if (unaccounted) {
			if (what == SPOOLED_NONE && !hit)
				pr_warn("--spool %s: spool.%u: no frame at byte %lld: the rest left out",
					s->dir, s->segs[n].nr, (long long)off);
			else if (what == SPOOLED_NONE)
				pr_warn("--spool %s: spool.%u: bytes %lld to %lld damaged: left out",
					s->dir, s->segs[n].nr, (long long)off,
					(long long)(next - 1));
			for (unsigned int i = 0; i < s->nr; i++)
				s->streams[i].maybe_lost = true;
		}
		if (!hit)
			break;
		off = next;
	}
	munmap(map, size);
	free(scratch);
	ZSTD_freeDCtx(dz);
	s->segs[n].size = size;
	s->spool_bytes += size;
}

/*
 * Once the collector said what it holds of a killed sender's recording:
 * numbers between that and a stream's first frame in the spool, and after
 * its last one if a damaged stretch followed it, are counted lost (how many
 * records unknown), so the collector takes the rest (under lock).
 */
static void recovered_fixup(struct sender *s)
{
	for (unsigned int i = 0; i < s->nr; i++) {
		struct send_stream *st = &s->streams[i];
		struct spool_frame *f;

		for (f = s->head; f && f->stream != i; f = f->next)
			;
		if (f && f->first_seq > st->acked + 1) {
			struct spool_frame *gap = xmalloc(sizeof(*gap));

			*gap = (struct spool_frame){ .next = s->head, .stream = i,
						     .first_seq = st->acked + 1,
						     .seq = f->first_seq - 1,
						     .lost = KTNET_LOST_UNKNOWN,
						     .first_tsc = f->first_tsc, .seg = NO_SEGMENT };
			s->head = gap;
			pr_warn("--spool %s: cpu %u: frames %llu to %llu neither in the spool nor "
				"at the collector: counted lost, how many records unknown", s->dir,
				st->id, (unsigned long long)gap->first_seq,
				(unsigned long long)gap->seq);
		}
		if (st->maybe_lost) {
			if (st->acked > st->seq)
				st->seq = st->acked;
			frame_append(s, &(struct spool_frame){ .stream = i, .first_seq = st->seq + 1,
							       .seq = st->seq + 1,
							       .lost = KTNET_LOST_UNKNOWN,
							       .first_tsc = st->last_tsc,
							       .seg = NO_SEGMENT });
			pr_warn("--spool %s: cpu %u: frames after %llu may have been in a damaged "
				"stretch: counted lost, how many records unknown", s->dir, st->id,
				(unsigned long long)st->seq);
			st->seq++;
			st->maybe_lost = false;
		}
	}
	s->cursor = s->head;
}

/*
 * A segment file's name as the sender writes it: spool.N, N in decimal
 * without leading zeros, an unsigned int (so two names never mean one N).
 */
static int spool_segment_nr(const struct dirent *e)
{
	const char *digits = e->d_name + 6;
	size_t len = strlen(digits);

	return !strncmp(e->d_name, "spool.", 6) && is_spool_file(e->d_name) && len &&
	       len <= 10 && (digits[0] != '0' || len == 1) && strtoull(digits, NULL, 10) <= UINT_MAX;
}

/* A sender for the killed recording in @dir (DIR/unsent.N), NULL if it has no HELLO. */
static struct sender *recovered_open(struct sender *parent, const char *dir)
{
	char *path = in_dir(dir, "hello");
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct sender *s;
	struct stat st;
	struct dirent **names;
	uint8_t *payload;
	unsigned int nr;
	int k;

	free(path);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(struct ktnet_hello) ||
	    st.st_size > (off_t)(sizeof(struct ktnet_hello) + 4 * KTNET_STREAMS_MAX)) {
		pr_warn("--spool %s: no HELLO of the recording (hello): its frames cannot be sent",
			dir);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	payload = xmalloc(st.st_size);
	s = xcalloc(1, sizeof(*s));
	if (ktnet_read_all(fd, payload, st.st_size) < 0)
		memset(payload, 0, st.st_size);
	close(fd);
	memcpy(&s->hello, payload, sizeof(s->hello));
	nr = le32toh(s->hello.nr_streams);
	if (!nr || st.st_size != (off_t)(sizeof(s->hello) + 4 * nr) ||
	    !memchr(s->hello.name, '\0', sizeof(s->hello.name)) || !ktnet_name_ok(s->hello.name)) {
		pr_warn("--spool %s: hello: not a HELLO: its frames cannot be sent", dir);
		free(payload);
		free(s);
		return NULL;
	}
	s->o = parent->o;
	s->addr = parent->addr;
	s->keyed = parent->keyed;
	memcpy(s->key, parent->key, sizeof(s->key));
	s->dir = xstrdup(dir);
	s->recovered = true;
	s->live = parent;
	pthread_mutex_init(&s->lock, NULL);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0)
		die("eventfd: %s", strerror(errno));
	s->nr = nr;
	s->streams = xcalloc(nr, sizeof(*s->streams));
	for (unsigned int i = 0; i < nr; i++) {
		memcpy(&s->streams[i].id, payload + sizeof(s->hello) + 4 * i, 4);
		s->streams[i].id = le32toh(s->streams[i].id);
		s->streams[i].last_frame = now();
	}
	free(payload);
	/* in the order written (versionsort: numerically), one entry a file */
	k = scandir(dir, &names, spool_segment_nr, versionsort);
	s->segs = xcalloc(k > 0 ? k : 1, sizeof(*s->segs));
	s->nr_segs = k > 0 ? k : 0;
	for (int i = 0; i < k; i++) {
		path = in_dir(dir, names[i]->d_name);
		s->segs[i].nr = strtoul(names[i]->d_name + 6, NULL, 10);
		s->segs[i].fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		/* segments are numbered on: one not there is a hole */
		if (s->segs[i].fd < 0 || (i && s->segs[i].nr != s->segs[i - 1].nr + 1))
			spool_hole(s);
		if (s->segs[i].fd < 0)
			pr_warn("--spool %s: %s", path, strerror(errno));
		else
			spool_read_segment(s, i, s->segs[i].fd);
		free(path);
		free(names[i]);
	}
	if (k >= 0)
		free(names);
	s->cur_seg = s->nr_segs ? s->nr_segs - 1 : 0;
	s->cursor = s->head;
	s->finishing = true;
	s->deadline = now() + s->o->send_wait;
	return s;
}

static void recovered_close(struct sender *s)
{
	while (s->head) {
		struct spool_frame *f = s->head;

		s->head = f->next;
		free(f);
	}
	for (unsigned int i = 0; i < s->nr_segs; i++)
		if (s->segs[i].fd >= 0)
			close(s->segs[i].fd);
	close(s->wake_fd);
	pthread_mutex_destroy(&s->lock);
	free(s->segs);
	free(s->streams);
	free(s->dir);
	free(s);
}

/* Each killed recording's frames in --spool DIR/unsent.N, oldest first. */
static void resend_unsent(struct sender *s)
{
	struct dirent **names;
	int k;

	if (!s->o->spool)
		return;
	k = scandir(s->dir, &names, NULL, versionsort);
	for (int i = 0; i < k; i++) {
		char *dir = in_dir(s->dir, names[i]->d_name);
		struct sender *r = NULL;
		uint64_t frames = 0, records = 0;

		if (!strncmp(names[i]->d_name, "unsent.", 7))
			r = recovered_open(s, dir);
		for (struct spool_frame *f = r ? r->head : NULL; f; f = f->next, frames++)
			records += f->records;
		if (r && deliver(r)) {
			pr_info("--send %s:%s: an earlier recording's %llu frames (%llu records) "
				"from %s: the collector has them", s->addr.host, s->addr.port,
				(unsigned long long)frames, (unsigned long long)records, dir);
			spool_remove(r);
		} else if (r) {
			pr_warn("--send %s:%s: an earlier recording's frames in %s not all "
				"acknowledged within --send-wait %g s: kept for the next run",
				s->addr.host, s->addr.port, dir, s->o->send_wait);
		}
		if (r)
			recovered_close(r);
		free(dir);
		free(names[i]);
	}
	if (k >= 0)
		free(names);
}

/* DIR/hello: this recording's HELLO, for a sender started after a kill. */
static void spool_write_hello(struct sender *s)
{
	size_t len;
	uint8_t *payload = hello_payload(s, &len);
	char *path = in_dir(s->dir, "hello");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || ktnet_write_all(fd, payload, len) < 0)
		die("--spool %s: %s: %s", s->dir, path, strerror(errno));
	close(fd);
	free(path);
	free(payload);
}

struct sender *sender_open(const struct ktrace_opts *o, const struct ktfile_header *tmpl,
			   const unsigned int *cpus, unsigned int nr)
{
	struct sender *s = xcalloc(1, sizeof(*s));
	char host[256] = "";

	s->o = o;
	if (!ktnet_parse_addr(o->send, &s->addr, false))
		kt_usage_error("--send %s: not HOST:PORT", o->send);
	if (o->key) {
		const char *why;

		ktnet_crypto_init();
		if (ktnet_key_load(o->key, s->key, &why) < 0)
			die("--key %s: %s", o->key, why);
		s->keyed = true;
	}
	if (o->spool) {
		int dfd, err = kt_mkdir_private(o->spool);

		/* ours and nobody else's: its files are read back and sent */
		if (err < 0)
			die("--spool %s: %s", o->spool, strerror(-err));
		dfd = kt_open_checked_dir(o->spool);
		if (dfd < 0)
			die("--spool %s: %s", o->spool, errno == EPERM ?
			    "another user's, or others may write in it: not a spool" :
			    strerror(errno));
		close(dfd);
		spool_set_aside(o->spool);
		s->dir = xstrdup(o->spool);
	} else {
		const char *tmp = getenv("TMPDIR");
		size_t len = strlen(tmp && *tmp ? tmp : "/tmp") + 32;

		s->dir = xmalloc(len);
		snprintf(s->dir, len, "%s/ktrace-spool.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(s->dir))
			die("--send: a spool directory in %s: %s", tmp && *tmp ? tmp : "/tmp",
			    strerror(errno));
		s->own_dir = true;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0)
		die("eventfd: %s", strerror(errno));
	segment_new(s);
	s->nr = nr;
	s->streams = xcalloc(nr, sizeof(*s->streams));
	for (unsigned int i = 0; i < nr; i++) {
		s->streams[i].id = cpus[i];
		s->streams[i].zc = ZSTD_createCCtx();
		s->streams[i].last_frame = now();
		if (!s->streams[i].zc)
			die("zstd: out of memory");
	}
	if (o->name)
		snprintf(s->hello.name, sizeof(s->hello.name), "%s", o->name);
	else if (gethostname(host, sizeof(host) - 1) == 0)
		snprintf(s->hello.name, sizeof(s->hello.name), "%s", host);
	if (!ktnet_name_ok(s->hello.name))
		die("--name %s: a machine name is 1-63 of A-Z a-z 0-9 . _ - (not . first)",
		    s->hello.name);
	if (getrandom(&s->hello.session, sizeof(s->hello.session), 0) != sizeof(s->hello.session))
		s->hello.session = ktnet_mono_ns() ^ ((uint64_t)getpid() << 32);
	s->hello.session = htole64(s->hello.session);
	s->hello.nr_streams = htole32(nr);
	memcpy(s->hello.header, tmpl, sizeof(s->hello.header));
	if (!s->own_dir)
		spool_write_hello(s);
	return s;
}

/* Where BASE.kallsyms and the other files go: the spool, to be sent from there. */
const char *sender_base(struct sender *s)
{
	if (!s->base) {
		s->base = xmalloc(strlen(s->dir) + 8);
		sprintf(s->base, "%s/trace", s->dir);
	}
	return s->base;
}

void sender_start(struct sender *s)
{
	int err = pthread_create(&s->thread, NULL, net_thread, s);

	if (err)
		die("--send: starting its thread: %s", strerror(err));
}

int sender_finish(struct sender *s, double wait)
{
	uint64_t dropped = 0, left = 0;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	/* drops after the last frame: an empty frame counts them */
	for (unsigned int i = 0; i < s->nr; i++) {
		if (s->streams[i].pending_lost) {
			pthread_mutex_unlock(&s->lock);
			sender_put(s, i, NULL, 0);
			pthread_mutex_lock(&s->lock);
		}
	}
	s->finishing = true;
	s->deadline = now() + wait;
	s->wait = wait;
	pthread_mutex_unlock(&s->lock);
	wake(s);
	pthread_join(s->thread, NULL);

	for (struct spool_frame *f = s->head; f; f = f->next)
		if (f->seq > s->streams[f->stream].acked)
			left += f->records;
	for (unsigned int i = 0; i < s->nr; i++)
		dropped += s->streams[i].dropped;
	pr_info("sent %llu frames, %llu bytes for %llu bytes of records (%.1f%%); "
		"%llu records dropped (spool full) and counted lost",
		(unsigned long long)s->frames, (unsigned long long)s->wire_bytes,
		(unsigned long long)s->raw_bytes,
		s->raw_bytes ? 100.0 * s->wire_bytes / s->raw_bytes : 0.0,
		(unsigned long long)dropped);
	if (s->undelivered && s->auth_failed) {
		pr_err("--send %s:%s: not authenticated (said above) within --send-wait %g s: "
		       "the frames of %llu records stay in %s", s->addr.host, s->addr.port,
		       wait, (unsigned long long)left, s->dir);
		ret = -1;
	} else if (s->undelivered) {
		pr_err("--send %s:%s: the collector did not acknowledge %llu records within "
		       "--send-wait %g s; their frames stay in %s", s->addr.host, s->addr.port,
		       (unsigned long long)left, wait, s->dir);
		ret = -1;
	}
	if (!ret)
		spool_remove(s);
	return ret;
}
