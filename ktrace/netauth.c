// SPDX-License-Identifier: GPL-2.0
/*
 * netauth: the keys of --send and --listen, the handshake's proofs, and
 * the sealing of every message after it (ktnet.h says the protocol).
 *
 * Only libsodium's primitives: HMAC-SHA-256 (crypto_auth_hmacsha256) for
 * the proofs and the session keys, ChaCha20-Poly1305 (IETF) for the
 * messages.  Nothing here is a primitive of our own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktnet.h"
#include "util.h"

/* Labels: each MAC says what it is for, so none can stand for another. */
#define LABEL_COLLECTOR	"ktnet1 collector"
#define LABEL_SENDER	"ktnet1 sender"
#define LABEL_S2C	"ktnet1 key s2c"
#define LABEL_C2S	"ktnet1 key c2s"

void ktnet_crypto_init(void)
{
	if (sodium_init() < 0)
		die("libsodium: cannot initialise");
}

/*
 * A key file: 64 hex digits (32 bytes), a newline after them allowed,
 * nothing else; a regular file of ours that nobody else may read or
 * write (mode 0600 or stricter).  0, or -1 with @why set.
 */
int ktnet_key_load(const char *path, uint8_t key[KTNET_KEY_BYTES], const char **why)
{
	static char msg[160];
	char text[KTNET_KEY_BYTES * 2 + 2] = "";
	size_t hexlen;
	struct stat st;
	ssize_t n;
	int fd;

	/* no FIFO that blocks, no link to follow */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		goto bad;
	}
	if (st.st_uid != geteuid()) {
		*why = "another user's file: not a key of ours";
		goto bad;
	}
	if (st.st_mode & 077) {
		snprintf(msg, sizeof(msg), "mode %04o: others may read or change it "
			 "(chmod 600 it, and make a new key if they did)", st.st_mode & 07777);
		*why = msg;
		goto bad;
	}
	n = read(fd, text, sizeof(text));
	close(fd);
	hexlen = n == KTNET_KEY_BYTES * 2 + 1 && text[n - 1] == '\n' ? (size_t)n - 1 : (size_t)n;
	if (n < 0 || hexlen != KTNET_KEY_BYTES * 2 ||
	    sodium_hex2bin(key, KTNET_KEY_BYTES, text, hexlen, NULL, NULL, NULL) ||
	    strspn(text, "0123456789abcdefABCDEF") != hexlen) {
		*why = "not a key: 64 hex digits (openssl rand -hex 32)";
		sodium_memzero(text, sizeof(text));
		return -1;
	}
	sodium_memzero(text, sizeof(text));
	return 0;
bad:
	close(fd);
	return -1;
}

/* HMAC-SHA-256 under @key of LABEL || name[64] || the sender's nonce || the collector's. */
static void transcript_mac(uint8_t out[KTNET_MAC_BYTES], const uint8_t key[KTNET_KEY_BYTES],
			   const char *label, const struct ktnet_proofs *p)
{
	crypto_auth_hmacsha256_state st;
	char padded[KTNET_NAME_MAX] = "";

	/* the name, NUL-padded: the bytes after its NUL are no part of it */
	memcpy(padded, p->name, strnlen(p->name, sizeof(padded) - 1));
	crypto_auth_hmacsha256_init(&st, key, KTNET_KEY_BYTES);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, strlen(label) + 1);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)padded, sizeof(padded));
	crypto_auth_hmacsha256_update(&st, p->sender_nonce, KTNET_NONCE_BYTES);
	crypto_auth_hmacsha256_update(&st, p->collector_nonce, KTNET_NONCE_BYTES);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

void ktnet_nonce(uint8_t nonce[KTNET_NONCE_BYTES])
{
	randombytes_buf(nonce, KTNET_NONCE_BYTES);
}

void ktnet_proofs(struct ktnet_proofs *p, const uint8_t key[KTNET_KEY_BYTES])
{
	transcript_mac(p->collector_mac, key, LABEL_COLLECTOR, p);
	transcript_mac(p->sender_mac, key, LABEL_SENDER, p);
}

bool ktnet_mac_equal(const uint8_t a[KTNET_MAC_BYTES], const uint8_t b[KTNET_MAC_BYTES])
{
	return crypto_verify_32(a, b) == 0;
}

/*
 * The connection's keys, one a direction, from the key and both nonces:
 * new with every handshake, so nothing of an earlier connection is valid
 * on this one.
 */
void ktnet_seal_start(struct ktnet_seal *s, const uint8_t key[KTNET_KEY_BYTES],
		      const struct ktnet_proofs *p, bool collector)
{
	uint8_t s2c[KTNET_KEY_BYTES], c2s[KTNET_KEY_BYTES];

	transcript_mac(s2c, key, LABEL_S2C, p);
	transcript_mac(c2s, key, LABEL_C2S, p);
	memcpy(s->tx_key, collector ? c2s : s2c, KTNET_KEY_BYTES);
	memcpy(s->rx_key, collector ? s2c : c2s, KTNET_KEY_BYTES);
	sodium_memzero(s2c, sizeof(s2c));
	sodium_memzero(c2s, sizeof(c2s));
	s->tx_n = s->rx_n = 0;
	s->on = true;
}

/* The nonce of message @n: its number, never used twice under one key. */
static void counter_nonce(uint8_t out[crypto_aead_chacha20poly1305_IETF_NPUBBYTES], uint64_t n)
{
	uint64_t le = htole64(n);

	memset(out, 0, crypto_aead_chacha20poly1305_IETF_NPUBBYTES);
	memcpy(out, &le, sizeof(le));
}

void ktnet_seal(struct ktnet_seal *s, uint8_t outer[KTNET_HDR_SIZE], uint8_t *msg, size_t len,
		uint8_t tag[KTNET_SEAL_TAG])
{
	uint8_t nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
	struct ktnet_hdr h = { .type = KTNET_SEALED, .stream = KTNET_STREAM_NONE,
			       .len = len + KTNET_SEAL_TAG, .seq = s->tx_n };

	ktnet_encode(outer, &h);
	counter_nonce(nonce, s->tx_n++);
	/* in place: the cipher is a stream's XOR, the tag over what it made */
	crypto_aead_chacha20poly1305_ietf_encrypt_detached(msg, tag, NULL, msg, len, outer,
							   KTNET_HDR_SIZE, NULL, nonce, s->tx_key);
}

int ktnet_unseal(struct ktnet_seal *s, const uint8_t outer[KTNET_HDR_SIZE], uint8_t *sealed,
		 size_t len)
{
	uint8_t nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];

	if (len < KTNET_HDR_SIZE + KTNET_SEAL_TAG)
		return -EPROTO;
	/* its number is ours, not the header's: a frame again or out of order fails */
	counter_nonce(nonce, s->rx_n);
	if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(sealed, NULL, sealed,
							       len - KTNET_SEAL_TAG,
							       sealed + len - KTNET_SEAL_TAG, outer,
							       KTNET_HDR_SIZE, nonce, s->rx_key))
		return -EBADMSG;
	s->rx_n++;
	return 0;
}

/* --- a blocking connection, sealed once the handshake is done (the sender's) --- */

int ktnet_chan_write(struct ktnet_chan *ch, const void *msg, size_t len)
{
	uint8_t *buf;
	int ret;

	if (!ch->seal.on)
		return ktnet_write_all(ch->fd, msg, len);
	buf = xmalloc(KTNET_HDR_SIZE + len + KTNET_SEAL_TAG);
	memcpy(buf + KTNET_HDR_SIZE, msg, len);
	ktnet_seal(&ch->seal, buf, buf + KTNET_HDR_SIZE, len, buf + KTNET_HDR_SIZE + len);
	ret = ktnet_write_all(ch->fd, buf, KTNET_HDR_SIZE + len + KTNET_SEAL_TAG);
	free(buf);
	return ret;
}

int ktnet_chan_send(struct ktnet_chan *ch, const struct ktnet_hdr *h, const void *payload)
{
	uint8_t *buf;
	int ret;

	if (!ch->seal.on)
		return ktnet_send(ch->fd, h, payload);
	buf = xmalloc(KTNET_HDR_SIZE + h->len);
	ktnet_encode(buf, h);
	if (h->len)
		memcpy(buf + KTNET_HDR_SIZE, payload, h->len);
	ret = ktnet_chan_write(ch, buf, KTNET_HDR_SIZE + h->len);
	free(buf);
	return ret;
}

const char *ktnet_chan_recv(struct ktnet_chan *ch, struct ktnet_hdr *h, int *err)
{
	uint8_t wire[KTNET_HDR_SIZE], sealed[KTNET_HDR_SIZE + KTNET_SEAL_TAG];
	const char *bad;

	*err = ktnet_read_all(ch->fd, wire, sizeof(wire));
	if (*err)
		return NULL;
	bad = ktnet_decode(h, wire);
	*err = bad ? -EPROTO : 0;
	if (bad || !ch->seal.on)
		return bad;
	*err = -EPROTO;
	/* what a collector sends has no payload: sealed, a header and a tag */
	if (h->type != KTNET_SEALED || h->len != sizeof(sealed))
		return "a message in clear, or of a size the collector never sends, after the "
		       "handshake";
	*err = ktnet_read_all(ch->fd, sealed, sizeof(sealed));
	if (*err)
		return NULL;
	*err = -EPROTO;
	if (ktnet_unseal(&ch->seal, wire, sealed, sizeof(sealed)))
		return "a message that does not authenticate (altered, replayed or out of order)";
	bad = ktnet_decode(h, sealed);
	if (!bad && h->len)
		bad = "a message with a payload";
	*err = bad ? -EPROTO : 0;
	return bad;
}

void ktnet_chan_close(struct ktnet_chan *ch)
{
	close(ch->fd);
	sodium_memzero(&ch->seal, sizeof(ch->seal));
	ch->fd = -1;
}
