/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktnet: the wire protocol between `ktrace --send` (a sender, one per
 * machine) and `ktrace --listen` (the collector), over TCP.
 *
 * Every message is a 64-byte header, all integers little-endian, then
 * @len bytes of payload.  A connection starts with HELLO from the sender
 * (the collector closes one that sends anything else first); the collector
 * answers with one ACK per stream it already holds (the
 * highest sequence number it has written, after a reconnect or a restart
 * of the collector) and an ACK for KTNET_STREAM_NONE that ends the list.
 * The sender then sends its FILE messages and every DATA frame after the
 * acknowledged ones, in order; the collector acknowledges each DATA frame
 * once its records are in the trace file.  DATA sequence numbers of a
 * stream are 1, 2, 3 ... with no gaps (but see DATA's KTNET_LOST_UNKNOWN):
 * a frame the sender could not keep (its spool full) never gets one, its
 * records are counted in the next frame's @lost instead.
 *
 *   HELLO        s->c  payload: struct ktnet_hello, then the stream ids (u32 each)
 *   ACK          c->s  @stream, @seq: the highest frame written
 *   DATA         s->c  @stream, @seq, @first_tsc, @last_tsc, @records, @lost;
 *                      payload: one zstd frame of @records records in columns
 *                      (ktnet_to_columns()): the time stamps as differences
 *                      from the one before (u64 each), then the events, the
 *                      thread ids, the arg1s, the arg2s (u32 each): zstd -1
 *                      packed ktgen's trace so to 29% of its bytes, as it
 *                      is to 42%.
 *                      The collector writes a KTRACE_META_LOST record counting
 *                      @lost (stamped @first_tsc) before the records;
 *                      KTNET_LOST_UNKNOWN: some were lost, how many is not
 *                      known (a killed sender's spool damaged on its disk).
 *                      A DATA frame whose @lost is KTNET_LOST_UNKNOWN may
 *                      carry any @seq greater than the stream's last: the
 *                      frames between are lost, how many records is not
 *                      known; the collector writes one lost marker of
 *                      unknown count and takes the frame's seq.
 *   BEACON       s->c  @stream is idle, nothing lost, up to @first_tsc
 *   FILE         s->c  payload: a NUL-terminated suffix (".kallsyms"), then a
 *                      zstd frame of the file's contents: BASE<suffix>
 *   PROBE        s->c  clock probe: @t[0] = t1, the sender's CLOCK_MONOTONIC ns
 *   PROBE_REPLY  c->s  @t[0] = t1, @t[1] = t2 (received), @t[2] = t3 (sent),
 *                      on the collector's CLOCK_MONOTONIC
 *   CLOCK        s->c  @t[0..3] = t1, t2, t3, t4 (the reply received):
 *                      the collector appends them to BASE.clock
 *   END          s->c  @stream is complete (@seq its last frame)
 *
 * With a key (--key, netauth.c), the sender starts with AUTH instead, and
 * HELLO only follows the proofs (a collector with a key refuses a HELLO
 * before them, one without refuses AUTH):
 *   AUTH         s->c  payload: struct ktnet_auth: the machine name, the
 *                      sender's nonce (32 random bytes)
 *   CHALLENGE    c->s  payload: struct ktnet_challenge: the collector's nonce,
 *                      and its proof: HMAC-SHA-256(K, "ktnet1 collector" NUL,
 *                      name[64], sender's nonce, collector's nonce)
 *   PROOF        s->c  payload: HMAC-SHA-256(K, "ktnet1 sender" NUL, the same)
 *   REFUSE       c->s  @seq: enum ktnet_refusal; the collector closes after it
 * K is the machine's key.  Every message after PROOF, both ways, is SEALED:
 *   SEALED       both  payload: the message (header and payload) encrypted with
 *                      ChaCha20-Poly1305 (IETF), then its 16-byte tag; the
 *                      SEALED header is the associated data.  A direction's
 *                      key is HMAC-SHA-256(K, "ktnet1 key s2c" or "... c2s"
 *                      NUL, name[64], both nonces): new each connection; its
 *                      nonce is the message's number on the connection (0,
 *                      1, 2 ...), counted by the receiver, so a message sent
 *                      again, dropped or out of order does not decrypt.
 */
#ifndef KTRACE_KTNET_H
#define KTRACE_KTNET_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/ktrace.h>

#define KTNET_MAGIC		"KTN\x01"	/* 4 bytes */
#define KTNET_VERSION		1
#define KTNET_HDR_SIZE		64
#define KTNET_PAYLOAD_MAX	(64u << 20)	/* a bigger @len is a protocol error */
#define KTNET_NAME_MAX		64		/* machine name, NUL included */
#define KTNET_STREAM_NONE	0xffffffffu
#define KTNET_STREAMS_MAX	8192		/* in a HELLO; stream ids are below it (CPUs) */
#define KTNET_LOST_UNKNOWN	UINT64_MAX	/* DATA's @lost: not known how many (KTEV_LOST_UNKNOWN) */
#define KTNET_RECORDS_MAX	(1u << 22)	/* in one DATA frame; ktrace sends CHUNK_RECORDS */

enum ktnet_type {
	KTNET_HELLO = 1,
	KTNET_ACK,
	KTNET_DATA,
	KTNET_BEACON,
	KTNET_FILE,
	KTNET_PROBE,
	KTNET_PROBE_REPLY,
	KTNET_CLOCK,
	KTNET_END,
	KTNET_AUTH,
	KTNET_CHALLENGE,
	KTNET_PROOF,
	KTNET_REFUSE,
	KTNET_SEALED,
	KTNET_TYPE_MAX
};

/* The header as the program uses it; ktnet_encode/decode give its wire form. */
struct ktnet_hdr {
	uint16_t type;		/* wire  4: enum ktnet_type (after magic[4]) */
	uint32_t stream;	/* wire  8: the CPU, or KTNET_STREAM_NONE */
	uint32_t len;		/* wire 12: payload bytes */
	uint64_t seq;		/* wire 16 */
	uint64_t first_tsc;	/* wire 24 */
	uint64_t last_tsc;	/* wire 32 */
	uint64_t lost;		/* wire 40 */
	uint32_t records;	/* wire 48 */
	/* wire 52..63: zero */
};

/* PROBE, PROBE_REPLY, CLOCK: the times ride in seq, first_tsc, last_tsc, lost */
#define ktnet_t(h, i)	(*((uint64_t *[]){ &(h)->seq, &(h)->first_tsc, &(h)->last_tsc, &(h)->lost })[i])

/* HELLO's payload, wire layout (little-endian), 608 bytes, then the stream ids. */
struct ktnet_hello {
	char name[KTNET_NAME_MAX];	/* machine name: [A-Za-z0-9._-], not "." first */
	uint64_t session;		/* random per recording: a new one starts the files over */
	uint32_t nr_streams;
	uint32_t reserved;
	uint8_t header[512];		/* the trace files' header (struct ktfile_header), cpu 0 */
	uint8_t pad[16];
};

_Static_assert(sizeof(struct ktnet_hello) == 608, "hello is 608 bytes");

#define KTNET_KEY_BYTES		32
#define KTNET_NONCE_BYTES	32
#define KTNET_MAC_BYTES		32
#define KTNET_SEAL_TAG		16
/* a SEALED message holds a message: its header and tag more than it */
#define KTNET_SEALED_MAX	(KTNET_HDR_SIZE + KTNET_PAYLOAD_MAX + KTNET_SEAL_TAG)

struct ktnet_auth {
	char name[KTNET_NAME_MAX];
	uint8_t nonce[KTNET_NONCE_BYTES];
};

struct ktnet_challenge {
	uint8_t nonce[KTNET_NONCE_BYTES];
	uint8_t mac[KTNET_MAC_BYTES];
};

/* REFUSE's @seq: why the collector will not take this sender */
enum ktnet_refusal {
	KTNET_REFUSE_KEY_WANTED = 1,	/* a HELLO without AUTH: the collector has a key */
	KTNET_REFUSE_NO_KEY,		/* AUTH, to a collector without --key */
	KTNET_REFUSE_UNKNOWN_NAME,	/* no key for this machine name (a key directory) */
	KTNET_REFUSE_BAD_PROOF,		/* PROOF is not the key's */
};

static inline void ktnet_encode(uint8_t out[KTNET_HDR_SIZE], const struct ktnet_hdr *h)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	memset(out, 0, KTNET_HDR_SIZE);
	memcpy(out, KTNET_MAGIC, 4);
	v16 = htole16(KTNET_VERSION); memcpy(out + 4, &v16, 2);
	v16 = htole16(h->type); memcpy(out + 6, &v16, 2);
	v32 = htole32(h->stream); memcpy(out + 8, &v32, 4);
	v32 = htole32(h->len); memcpy(out + 12, &v32, 4);
	v64 = htole64(h->seq); memcpy(out + 16, &v64, 8);
	v64 = htole64(h->first_tsc); memcpy(out + 24, &v64, 8);
	v64 = htole64(h->last_tsc); memcpy(out + 32, &v64, 8);
	v64 = htole64(h->lost); memcpy(out + 40, &v64, 8);
	v32 = htole32(h->records); memcpy(out + 48, &v32, 4);
}

/* 0, or what is wrong with the header (a static string). */
static inline const char *ktnet_decode(struct ktnet_hdr *h, const uint8_t in[KTNET_HDR_SIZE])
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	if (memcmp(in, KTNET_MAGIC, 4))
		return "bad magic (not a ktrace sender or collector)";
	memcpy(&v16, in + 4, 2);
	if (le16toh(v16) != KTNET_VERSION)
		return "unknown protocol version";
	memcpy(&v16, in + 6, 2); h->type = le16toh(v16);
	memcpy(&v32, in + 8, 4); h->stream = le32toh(v32);
	memcpy(&v32, in + 12, 4); h->len = le32toh(v32);
	memcpy(&v64, in + 16, 8); h->seq = le64toh(v64);
	memcpy(&v64, in + 24, 8); h->first_tsc = le64toh(v64);
	memcpy(&v64, in + 32, 8); h->last_tsc = le64toh(v64);
	memcpy(&v64, in + 40, 8); h->lost = le64toh(v64);
	memcpy(&v32, in + 48, 4); h->records = le32toh(v32);
	if (!h->type || h->type >= KTNET_TYPE_MAX)
		return "unknown message type";
	if (h->len > KTNET_PAYLOAD_MAX && h->type != KTNET_SEALED)
		return "payload too large";
	/* checked before a byte of the payload is read or allocated */
	switch (h->type) {
	case KTNET_HELLO:
		if (h->len > sizeof(struct ktnet_hello) + 4 * KTNET_STREAMS_MAX)
			return "HELLO too large";
		break;
	case KTNET_DATA:
		if (h->records > KTNET_RECORDS_MAX)
			return "DATA frame of too many records";
		break;
	case KTNET_FILE:
		break;
	case KTNET_AUTH:
		if (h->len != sizeof(struct ktnet_auth))
			return "AUTH of a wrong size";
		break;
	case KTNET_CHALLENGE:
		if (h->len != sizeof(struct ktnet_challenge))
			return "CHALLENGE of a wrong size";
		break;
	case KTNET_PROOF:
		if (h->len != KTNET_MAC_BYTES)
			return "PROOF of a wrong size";
		break;
	case KTNET_SEALED:
		if (h->len < KTNET_HDR_SIZE + KTNET_SEAL_TAG || h->len > KTNET_SEALED_MAX)
			return "SEALED of a wrong size";
		break;
	default:
		if (h->len)
			return "a payload on a message that has none";
	}
	if (h->stream != KTNET_STREAM_NONE && h->stream >= KTNET_STREAMS_MAX)
		return "stream id out of range";
	return NULL;
}

/* A chunk of @nr records as DATA carries them, in @cols (as many bytes), and back. */
void ktnet_to_columns(void *cols, const struct ktrace_record *recs, size_t nr);
void ktnet_from_columns(struct ktrace_record *recs, const void *cols, size_t nr);

/* net.c: sockets for both ends. */
struct ktnet_addr {
	char host[256];		/* "" for any (listen) */
	char port[16];
};

/* "HOST:PORT", "[V6]:PORT", or (with @port_only_ok) "PORT"; false if malformed. */
bool ktnet_parse_addr(const char *arg, struct ktnet_addr *a, bool port_only_ok);
/* A connected TCP socket, or -errno; @why says what failed. */
int ktnet_connect(const struct ktnet_addr *a, const char **why);
/* A listening socket; dies with a message naming @arg on failure. */
int ktnet_listen(const struct ktnet_addr *a, const char *arg);
/* All @len bytes (to a socket or a file), or -errno (-EPIPE for a peer that closed). */
int ktnet_write_all(int fd, const void *buf, size_t len);
int ktnet_read_all(int fd, void *buf, size_t len);
/* A header and its payload in one call; -errno. */
int ktnet_send(int fd, const struct ktnet_hdr *h, const void *payload);
/* netauth.c: keys, proofs, sealed messages. */
struct ktnet_proofs {
	char name[KTNET_NAME_MAX];
	uint8_t sender_nonce[KTNET_NONCE_BYTES], collector_nonce[KTNET_NONCE_BYTES];
	uint8_t collector_mac[KTNET_MAC_BYTES], sender_mac[KTNET_MAC_BYTES];
};

struct ktnet_seal {
	bool on;
	uint8_t tx_key[KTNET_KEY_BYTES], rx_key[KTNET_KEY_BYTES];
	uint64_t tx_n, rx_n;		/* the next message's number each way */
};

/* A connection that blocks (the sender's): in clear until seal.on. */
struct ktnet_chan {
	int fd;
	struct ktnet_seal seal;
};

void ktnet_crypto_init(void);
/* A key file (64 hex digits, mode 0600, ours): 0, or -1 and @why. */
int ktnet_key_load(const char *path, uint8_t key[KTNET_KEY_BYTES], const char **why);
void ktnet_nonce(uint8_t nonce[KTNET_NONCE_BYTES]);
/* Both proofs of @p's name and nonces under @key. */
void ktnet_proofs(struct ktnet_proofs *p, const uint8_t key[KTNET_KEY_BYTES]);
bool ktnet_mac_equal(const uint8_t a[KTNET_MAC_BYTES], const uint8_t b[KTNET_MAC_BYTES]);
/* The connection's keys from the handshake: from now on every message is sealed. */
void ktnet_seal_start(struct ktnet_seal *s, const uint8_t key[KTNET_KEY_BYTES],
		      const struct ktnet_proofs *p, bool collector);
/* @msg (@len bytes: a header and its payload) encrypted in place; @outer its SEALED header. */
void ktnet_seal(struct ktnet_seal *s, uint8_t outer[KTNET_HDR_SIZE], uint8_t *msg, size_t len,
		uint8_t tag[KTNET_SEAL_TAG]);
/* A SEALED payload (@len bytes, its tag last) decrypted in place: 0, or -EBADMSG. */
int ktnet_unseal(struct ktnet_seal *s, const uint8_t outer[KTNET_HDR_SIZE], uint8_t *sealed,
		 size_t len);
/* A whole message (header and payload, as encoded), sealed if the channel is. */
int ktnet_chan_write(struct ktnet_chan *ch, const void *msg, size_t len);
int ktnet_chan_send(struct ktnet_chan *ch, const struct ktnet_hdr *h, const void *payload);
/*
 * The next header from the collector, unsealed if the channel is: NULL and
 * *@err 0; NULL and *@err < 0 for a connection that failed; what is wrong
 * (and *@err -EPROTO).  Only a message without a payload once sealed.
 */
const char *ktnet_chan_recv(struct ktnet_chan *ch, struct ktnet_hdr *h, int *err);
void ktnet_chan_close(struct ktnet_chan *ch);

/* CLOCK_MONOTONIC in ns: the clock the probes compare. */
uint64_t ktnet_mono_ns(void);
/* A machine name as ktnet_hello.name allows. */
bool ktnet_name_ok(const char *name);

#endif /* KTRACE_KTNET_H */
