/*
 * RFC 2136 dynamic update with ldns, signed with TSIG (RFC 8945) when a
 * key is configured.
 *
 * replace() sends ONE update message for the zone: for each family it
 * deletes the RRset and adds the new records.  The server applies the
 * update section in order and all or nothing, so clients never see an
 * empty or half-written set.  read() asks the same server with a plain
 * query (an authoritative server answers for its zone without TSIG).
 *
 * The exchanges are our own sockets, not ldns_send(): ldns waits up to
 * its timeout for each piece of a TCP reply, so a server that sends a
 * byte a second holds a run for minutes.  Here `timeout` is a deadline
 * for each exchange (ddup.ini(5): a query with its TCP retry after a
 * truncated UDP answer, or the update), never restarted by what
 * arrives; ldns only builds, signs, parses and verifies the messages.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ldns/ldns.h>

#include "config.h"
#include "provider.h"
#include "util.h"

#define R2_DEFAULT_PORT		53
#define R2_DEFAULT_TIMEOUT	"5s"
#define R2_UDP_MAX		512	/* an update carries no EDNS: RFC 1035 limit */
#define R2_TCP_MAX		65535	/* the TCP length prefix is 16 bits */
#define R2_EDNS_SIZE		1232	/* for queries over UDP */
#define R2_HOST_MAX		256

static const struct provider_key rfc2136_keys[] = {
	{ "server", PK_REQUIRED },
	{ "zone", PK_REQUIRED },
	{ "keyName", 0 },
	{ "keyAlgorithm", 0 },
	{ "keySecret", PK_SECRET },
	{ "protocol", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

/* keyAlgorithm values and the names ldns signs with. */
static const struct {
	const char	*name;
	const char	*ldns;
} algs[] = {
	{ "hmac-sha256", "hmac-sha256." },
	{ "hmac-sha512", "hmac-sha512." },
	{ "hmac-sha1", "hmac-sha1." },
	{ NULL, NULL }
};

struct r2 {
	char		*label;		/* "host:port" for messages */
	struct addr	 addr;		/* the server, resolved once */
	int		 port;
	char		*zone;		/* lower case, no trailing dot */
	char		*key_name;	/* NULL: unsigned */
	const char	*key_alg;
	char		*key_secret;
	int		 tcp;
	long long	 timeout_ms;
	/*
	 * mono_ms() bound of the exchange under way (a query with its
	 * retry over TCP, or the update), set as it begins: timeout_ms is
	 * a deadline, not an idle limit.
	 */
	long long	 deadline;
};

/*
 * Splits "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6
 * literal.  Returns 0 or -1.
 */
static int
parse_server(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon, *end, *p;
	size_t len;
	long n;

	*port = R2_DEFAULT_PORT;
	colon = NULL;
	if (s[0] == '[') {
		if ((end = strchr(s, ']')) == NULL)
			return -1;
		len = (size_t)(end - s - 1);
		p = s + 1;
		if (end[1] == ':')
			colon = end + 1;
		else if (end[1] != '\0')
			return -1;
	} else {
		p = s;
		colon = strchr(s, ':');
		/* Two colons or more: a bare IPv6 literal without a port. */
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			colon = NULL;
		len = colon != NULL ? (size_t)(colon - s) : strlen(s);
	}
	if (len == 0 || len >= hostlen)
		return -1;
	memcpy(host, p, len);
	host[len] = '\0';
	if (colon != NULL) {
		if (parse_long(colon + 1, 1, 65535, &n) == -1)
			return -1;
		*port = (int)n;
	}
	return 0;
}

/* A host name made of letters, digits, '-' and '.' (no I/O). */
static int
valid_hostname(const char *s)
{
	size_t i, len;

	len = strlen(s);
	if (len == 0 || len > 253 || s[0] == '.' || s[0] == '-')
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '.')
			return 0;
	return strstr(s, "..") == NULL;
}

/* Base64 as BIND's tsig-keygen writes it: padded, at least one byte. */
static int
valid_base64(const char *s)
{
	size_t i, len, pad;

	len = strlen(s);
	if (len == 0 || len % 4 != 0)
		return 0;
	pad = 0;
	for (i = 0; i < len; i++) {
		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (pad > 0)
			return 0;
		if (!isalnum((unsigned char)s[i]) && s[i] != '+' &&
		    s[i] != '/')
			return 0;
	}
	return pad <= 2 && len - pad > 1;
}

static const char *
alg_lookup(const char *name)
{
	size_t i;

	for (i = 0; algs[i].name != NULL; i++)
		if (strcasecmp(algs[i].name, name) == 0)
			return algs[i].ldns;
	return NULL;
}

static int
rfc2136_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v, *name, *secret;
	char host[R2_HOST_MAX];
	struct addr a;
	int port;

	*key = "server";
	v = provider_cfg_get(pc, "server");
	if (parse_server(v, host, sizeof(host), &port) == -1 ||
	    (addr_parse(host, &a) == -1 && !valid_hostname(host))) {
		snprintf(err, errlen, "server: \"%s\" is not a host or IP "
		    "address with an optional :port (IPv6 as [::1]:53)", v);
		return -1;
	}
	if (provider_check_zone(pc, "zone", key, err, errlen) == -1)
		return -1;

	name = provider_cfg_get(pc, "keyName");
	secret = provider_cfg_get(pc, "keySecret");
	if (name != NULL && secret == NULL) {
		*key = "keyName";
		snprintf(err, errlen, "keyName needs keySecret");
		return -1;
	}
	if (secret != NULL && (name == NULL || name[0] == '\0')) {
		*key = "keySecret";
		snprintf(err, errlen, "keySecret needs keyName");
		return -1;
	}
	if (name != NULL && !valid_hostname(name)) {
		*key = "keyName";
		snprintf(err, errlen, "keyName: \"%s\" is not a valid key "
		    "name", name);
		return -1;
	}
	if (secret != NULL && !valid_base64(secret)) {
		/* Never echo a secret, not even a wrong one. */
		*key = "keySecret";
		snprintf(err, errlen, "keySecret is not valid base64 (as "
		    "written by tsig-keygen)");
		return -1;
	}
	v = provider_cfg_get(pc, "keyAlgorithm");
	if (v != NULL && alg_lookup(v) == NULL) {
		*key = "keyAlgorithm";
		snprintf(err, errlen, "keyAlgorithm: \"%s\" is not one of "
		    "hmac-sha256, hmac-sha512, hmac-sha1", v);
		return -1;
	}
	v = provider_cfg_get(pc, "protocol");
	if (v != NULL && strcasecmp(v, "tcp") != 0 &&
	    strcasecmp(v, "udp") != 0) {
		*key = "protocol";
		snprintf(err, errlen, "protocol: \"%s\" is not tcp or udp", v);
		return -1;
	}
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

static void
r2_free(struct r2 *r2)
{
	if (r2 == NULL)
		return;
	free(r2->label);
	free(r2->zone);
	free(r2->key_name);
	free_secret(r2->key_secret);
	free(r2);
}

/*
 * A server given by name is resolved here, once per run, with the
 * system resolver (getaddrinfo): the first address returned is used for
 * every exchange of the run.
 */
static void *
rfc2136_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct addrinfo hints, *res;
	struct r2 *r2;
	const char *v;
	char host[R2_HOST_MAX], buf[R2_HOST_MAX + 16], ip[ADDR_STRLEN];
	void *sa;
	int gai;

	r2 = xcalloc(1, sizeof(*r2));
	v = provider_cfg_get(pc, "server");
	if (parse_server(v, host, sizeof(host), &r2->port) == -1) {
		snprintf(err, errlen, "server: \"%s\" is not valid", v);
		goto fail;
	}
	snprintf(buf, sizeof(buf), strchr(host, ':') != NULL ? "[%s]:%d" :
	    "%s:%d", host, r2->port);
	r2->label = xstrdup(buf);
	if (addr_parse(host, &r2->addr) == -1) {
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_DGRAM;
		if ((gai = getaddrinfo(host, NULL, &hints, &res)) != 0) {
			snprintf(err, errlen, "server %s: %s", r2->label,
			    gai_strerror(gai));
			goto fail;
		}
		if (res->ai_family == AF_INET)
			sa = &((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
		else
			sa = &((struct sockaddr_in6 *)(void *)res->ai_addr)->sin6_addr;
		if (inet_ntop(res->ai_family, sa, ip, sizeof(ip)) == NULL ||
		    addr_parse(ip, &r2->addr) == -1) {
			freeaddrinfo(res);
			snprintf(err, errlen, "server %s: no usable address",
			    r2->label);
			goto fail;
		}
		freeaddrinfo(res);
	}
	r2->zone = provider_zone_name(provider_cfg_get(pc, "zone"));
	if ((v = provider_cfg_get(pc, "keyName")) != NULL) {
		r2->key_name = xstrdup(v);
		r2->key_secret = xstrdup(provider_cfg_get(pc, "keySecret"));
		v = provider_cfg_get(pc, "keyAlgorithm");
		r2->key_alg = alg_lookup(v != NULL ? v : "hmac-sha256");
	}
	v = provider_cfg_get(pc, "protocol");
	r2->tcp = v == NULL || strcasecmp(v, "tcp") == 0;
	v = provider_cfg_get(pc, "timeout");
	if (parse_duration(v != NULL ? v : R2_DEFAULT_TIMEOUT,
	    &r2->timeout_ms) == -1 || r2->timeout_ms <= 0) {
		snprintf(err, errlen, "timeout: not a positive duration");
		goto fail;
	}
	if (r2->key_name != NULL && r2->key_alg == NULL) {
		snprintf(err, errlen, "keyAlgorithm: not supported");
		goto fail;
	}
	return r2;
fail:
	r2_free(r2);
	return NULL;
}

/* Results of the socket I/O of one exchange. */
enum r2_io {
	R2_IO_OK,
	R2_IO_TIMEOUT,		/* the deadline passed */
	R2_IO_CLOSED,		/* the peer hung up before the reply was whole */
	R2_IO_ERRNO		/* a socket error, in *e */
};

/*
 * Waits until fd is ready for ev (POLLIN, POLLOUT) or r2's deadline
 * passes.  The deadline is fixed for the exchange: a server that sends
 * a byte now and then does not push it back.
 */
static enum r2_io
r2_wait(const struct r2 *r2, int fd, short ev, int *e)
{
	struct pollfd pfd;
	long long left;
	int n;

	for (;;) {
		if ((left = r2->deadline - mono_ms()) <= 0)
			return R2_IO_TIMEOUT;
		pfd.fd = fd;
		pfd.events = ev;
		pfd.revents = 0;
		n = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n > 0)
			return R2_IO_OK;
		if (n == -1 && errno != EINTR) {
			*e = errno;
			return R2_IO_ERRNO;
		}
	}
}

/* Writes all len bytes of buf to the connected socket fd. */
static enum r2_io
r2_write(const struct r2 *r2, int fd, const uint8_t *buf, size_t len, int *e)
{
	enum r2_io io;
	ssize_t n;

	while (len > 0) {
		if ((io = r2_wait(r2, fd, POLLOUT, e)) != R2_IO_OK)
			return io;
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			*e = errno;
			return R2_IO_ERRNO;
		}
		buf += n;
		len -= (size_t)n;
	}
	return R2_IO_OK;
}

/* Reads exactly len bytes of a TCP reply into buf. */
static enum r2_io
r2_read(const struct r2 *r2, int fd, uint8_t *buf, size_t len, int *e)
{
	enum r2_io io;
	ssize_t n;

	while (len > 0) {
		if ((io = r2_wait(r2, fd, POLLIN, e)) != R2_IO_OK)
			return io;
		n = recv(fd, buf, len, 0);
		if (n == 0)
			return R2_IO_CLOSED;
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN ||
			    errno == EWOULDBLOCK)
				continue;
			*e = errno;
			return errno == ECONNRESET ? R2_IO_CLOSED : R2_IO_ERRNO;
		}
		buf += n;
		len -= (size_t)n;
	}
	return R2_IO_OK;
}

/*
 * Sends the len bytes of wire to the server and reads its reply into a
 * new buffer (*reply, *rlen), all before r2's deadline: over TCP with
 * the 2-byte length prefix, over UDP as one datagram on a connected
 * socket (so the kernel drops datagrams from anyone else).
 */
static enum r2_io
r2_exchange(const struct r2 *r2, int tcp, const uint8_t *wire, size_t len,
    uint8_t **reply, size_t *rlen, int *e)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin;
	struct sockaddr_in6 *sin6;
	socklen_t sslen, elen;
	uint8_t hdr[2], *buf = NULL;
	enum r2_io io;
	ssize_t n;
	size_t want;
	int fd;

	*reply = NULL;
	*rlen = 0;
	memset(&ss, 0, sizeof(ss));
	if (r2->addr.family == 4) {
		sin = (struct sockaddr_in *)(void *)&ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)r2->port);
		memcpy(&sin->sin_addr, r2->addr.b, 4);
		sslen = sizeof(*sin);
	} else {
		sin6 = (struct sockaddr_in6 *)(void *)&ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)r2->port);
		memcpy(&sin6->sin6_addr, r2->addr.b, 16);
		sslen = sizeof(*sin6);
	}
	fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) |
	    SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		*e = errno;
		return R2_IO_ERRNO;
	}
	if (connect(fd, (struct sockaddr *)&ss, sslen) == -1) {
		if (errno != EINPROGRESS && errno != EINTR) {
			*e = errno;
			io = R2_IO_ERRNO;
			goto out;
		}
		if ((io = r2_wait(r2, fd, POLLOUT, e)) != R2_IO_OK)
			goto out;
		elen = sizeof(*e);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, e, &elen) == -1)
			*e = errno;
		if (*e != 0) {
			io = R2_IO_ERRNO;
			goto out;
		}
	}
	if (tcp) {
		hdr[0] = (uint8_t)(len >> 8);
		hdr[1] = (uint8_t)len;
		if ((io = r2_write(r2, fd, hdr, 2, e)) != R2_IO_OK ||
		    (io = r2_write(r2, fd, wire, len, e)) != R2_IO_OK ||
		    (io = r2_read(r2, fd, hdr, 2, e)) != R2_IO_OK)
			goto out;
		want = (size_t)hdr[0] << 8 | hdr[1];
		buf = xmalloc(want > 0 ? want : 1);
		if ((io = r2_read(r2, fd, buf, want, e)) != R2_IO_OK)
			goto out;
		*rlen = want;
	} else {
		if ((io = r2_write(r2, fd, wire, len, e)) != R2_IO_OK)
			goto out;
		buf = xmalloc(R2_TCP_MAX);
		for (;;) {
			if ((io = r2_wait(r2, fd, POLLIN, e)) != R2_IO_OK)
				goto out;
			if ((n = recv(fd, buf, R2_TCP_MAX, 0)) >= 0)
				break;
			if (errno != EINTR && errno != EAGAIN &&
			    errno != EWOULDBLOCK) {
				*e = errno;
				io = R2_IO_ERRNO;
				goto out;
			}
		}
		*rlen = (size_t)n;
	}
	*reply = buf;
	buf = NULL;
	io = R2_IO_OK;
out:
	free(buf);
	close(fd);
	return io;
}

/*
 * Sends q (signed already when a key is configured) and reads the
 * reply before r2's deadline.  On success *ans holds the reply and *st
 * the ldns status (LDNS_STATUS_CRYPTO_TSIG_BOGUS: q was signed and the
 * reply did not verify).  Otherwise PERR_NET when nothing came back,
 * PERR_TEMP when what came back is no reply to q, with the reason in
 * err.
 */
static enum perr
r2_send(const struct r2 *r2, ldns_pkt *q, int tcp, ldns_pkt **ans,
    ldns_status *st, char *err, size_t errlen)
{
	const ldns_rdf *mac;
	uint8_t *wire = NULL, *reply = NULL;
	size_t len, rlen;
	enum r2_io io;
	enum perr rv = PERR_NET;
	char tmo[32];
	const char *proto = tcp ? "tcp" : "udp";
	int e = 0;

	*ans = NULL;
	*st = LDNS_STATUS_OK;
	if (ldns_pkt2wire(&wire, q, &len) != LDNS_STATUS_OK) {
		snprintf(err, errlen, "server %s: cannot build the request: "
		    "out of memory", r2->label);
		rv = PERR_TEMP;
		goto out;
	}
	io = r2_exchange(r2, tcp, wire, len, &reply, &rlen, &e);
	if (io == R2_IO_TIMEOUT) {
		format_duration(r2->timeout_ms, tmo, sizeof(tmo));
		snprintf(err, errlen, "server %s: timeout: no answer within "
		    "%s (%s)", r2->label, tmo, proto);
		goto out;
	}
	if (io == R2_IO_CLOSED) {
		snprintf(err, errlen, "server %s: connection closed without "
		    "a complete reply (%s)", r2->label, proto);
		goto out;
	}
	if (io == R2_IO_ERRNO) {
		snprintf(err, errlen, "server %s: %s (%s)", r2->label,
		    strerror(e), proto);
		goto out;
	}
	if ((*st = ldns_wire2pkt(ans, reply, rlen)) != LDNS_STATUS_OK) {
		snprintf(err, errlen, "server %s: unreadable reply: %s (%s)",
		    r2->label, ldns_get_errorstr_by_id(*st), proto);
		*ans = NULL;
		rv = PERR_TEMP;
		goto out;
	}
	if (!ldns_pkt_qr(*ans) || ldns_pkt_id(*ans) != ldns_pkt_id(q) ||
	    ldns_pkt_get_opcode(*ans) != ldns_pkt_get_opcode(q)) {
		snprintf(err, errlen, "server %s: reply does not match the "
		    "request", r2->label);
		ldns_pkt_free(*ans);
		*ans = NULL;
		rv = PERR_TEMP;
		goto out;
	}
	/* As ldns_send() does: a signed request wants a signed reply. */
	if (ldns_pkt_tsig(q) != NULL &&
	    (mac = ldns_rr_rdf(ldns_pkt_tsig(q), 3)) != NULL &&
	    !ldns_pkt_tsig_verify(*ans, reply, rlen, r2->key_name,
	    r2->key_secret, mac))
		*st = LDNS_STATUS_CRYPTO_TSIG_BOGUS;
	rv = PERR_OK;
out:
	free(wire);
	free(reply);
	return rv;
}

/* The TSIG error of a reply (BADSIG, BADKEY, BADTIME), or NULL. */
static const char *
tsig_error(const ldns_pkt *ans)
{
	const ldns_rr *t;
	const ldns_rdf *f;

	if ((t = ldns_pkt_tsig(ans)) == NULL || ldns_rr_rd_count(t) < 6)
		return NULL;
	f = ldns_rr_rdf(t, 5);
	if (f == NULL || ldns_rdf_size(f) != 2)
		return NULL;
	switch (ldns_rdf2native_int16(f)) {
	case 16:
		return "BADSIG";
	case 17:
		return "BADKEY";
	case 18:
		return "BADTIME";
	}
	return NULL;
}

/*
 * Classifies a reply code and explains it in why.  query: the reply
 * is to a query (else to an update); signed_: a key was used; bogus:
 * the reply's TSIG did not verify.
 */
static enum perr
rcode_class(const struct r2 *r2, const ldns_pkt *ans, int query, int signed_,
    int bogus, char *why, size_t whylen)
{
	ldns_pkt_rcode rc;
	ldns_lookup_table *lt;
	const char *name, *te;

	rc = ldns_pkt_get_rcode(ans);
	lt = ldns_lookup_by_id(ldns_rcodes, (int)rc);
	name = lt != NULL ? lt->name : "unknown rcode";
	switch (rc) {
	case LDNS_RCODE_NOTAUTH:
		/*
		 * A signed request answered NOTAUTH with a reply that does
		 * not verify: the key was refused.  Otherwise the server is
		 * not authoritative for the zone.
		 */
		if (signed_ && bogus) {
			te = tsig_error(ans);
			snprintf(why, whylen, "NOTAUTH (TSIG key rejected or "
			    "not allowed%s%s)", te != NULL ? ": " : "",
			    te != NULL ? te : "");
			return PERR_AUTH;
		}
		snprintf(why, whylen, "NOTAUTH (server is not authoritative "
		    "for zone %s)", r2->zone);
		return PERR_NOTFOUND;
	case LDNS_RCODE_REFUSED:
		snprintf(why, whylen, "REFUSED (%s)", query ? "server does "
		    "not serve this zone to this client" : signed_ ?
		    "key not allowed to change this name, or client not "
		    "allowed" : "no keySecret given and unsigned requests "
		    "are not allowed");
		return PERR_AUTH;
	case LDNS_RCODE_NOTZONE:
		snprintf(why, whylen, "NOTZONE (name not in zone %s)",
		    r2->zone);
		return PERR_NOTFOUND;
	case LDNS_RCODE_NXDOMAIN:
		snprintf(why, whylen, "NXDOMAIN");
		return PERR_NOTFOUND;
	case LDNS_RCODE_FORMERR:
		snprintf(why, whylen, "FORMERR (server could not parse the "
		    "request)");
		return PERR_INVALID;
	case LDNS_RCODE_NOTIMPL:
		snprintf(why, whylen, "NOTIMPL (server does not support the "
		    "request)");
		return PERR_INVALID;
	case LDNS_RCODE_YXDOMAIN:
	case LDNS_RCODE_YXRRSET:
	case LDNS_RCODE_NXRRSET:
		snprintf(why, whylen, "%s (prerequisite failed)", name);
		return PERR_INVALID;
	case LDNS_RCODE_SERVFAIL:
		snprintf(why, whylen, "SERVFAIL");
		return PERR_TEMP;
	default:
		snprintf(why, whylen, "%s (%d)", name, (int)rc);
		return PERR_TEMP;
	}
}

static ldns_rdf *
dname_abs(const char *name)
{
	char buf[R2_HOST_MAX + 2];

	snprintf(buf, sizeof(buf), "%s.", name);
	return ldns_dname_new_frm_str(buf);
}

static ldns_rr_type
ldns_type_of(enum rrtype t)
{
	return t == RR_AAAA ? LDNS_RR_TYPE_AAAA : t == RR_CNAME ?
	    LDNS_RR_TYPE_CNAME : LDNS_RR_TYPE_A;
}

/* Appends "delete the RRset" of set's type to up. */
static int
push_delete(ldns_rr_list *up, const ldns_rdf *owner, const struct rrset *set)
{
	ldns_rr *rr;

	if ((rr = ldns_rr_new()) == NULL)
		return -1;
	ldns_rr_set_owner(rr, ldns_rdf_clone(owner));
	ldns_rr_set_class(rr, LDNS_RR_CLASS_ANY);
	ldns_rr_set_type(rr, ldns_type_of(set->type));
	ldns_rr_set_ttl(rr, 0);
	ldns_rr_list_push_rr(up, rr);
	return 0;
}

/* Appends one "add" of rdata text s of set's type to up. */
static int
push_add(ldns_rr_list *up, const ldns_rdf *owner, const struct rrset *set,
    const char *s)
{
	char	 target[R2_HOST_MAX + 2];
	ldns_rr	*rr;
	ldns_rdf *rd;

	if (set->type == RR_CNAME) {
		snprintf(target, sizeof(target), "%s.", s);
		rd = ldns_dname_new_frm_str(target);
	} else
		rd = ldns_rdf_new_frm_str(set->type == RR_AAAA ?
		    LDNS_RDF_TYPE_AAAA : LDNS_RDF_TYPE_A, s);
	if (rd == NULL || (rr = ldns_rr_new()) == NULL) {
		ldns_rdf_deep_free(rd);
		return -1;
	}
	ldns_rr_set_owner(rr, ldns_rdf_clone(owner));
	ldns_rr_set_class(rr, LDNS_RR_CLASS_IN);
	ldns_rr_set_type(rr, ldns_type_of(set->type));
	ldns_rr_set_ttl(rr, (uint32_t)set->ttl);
	ldns_rr_push_rdf(rr, rd);
	ldns_rr_list_push_rr(up, rr);
	return 0;
}

/*
 * Every RRset's delete first, then every add: a server ignores an add
 * of addresses at a name that still holds a CNAME, and a CNAME added
 * beside addresses (RFC 2136 3.4.2.2), so a tier that moves between a
 * CNAME and addresses must lose the old type before it gains the new.
 * One message, applied whole: the name never has both, nor neither.
 */
static int
push_sets(ldns_rr_list *up, const ldns_rdf *owner, const struct rrset *sets,
    size_t nsets)
{
	size_t i, j;

	for (i = 0; i < nsets; i++)
		if (push_delete(up, owner, &sets[i]) == -1)
			return -1;
	for (i = 0; i < nsets; i++) {
		for (j = 0; j < sets[i].addrs.n; j++)
			if (push_add(up, owner, &sets[i],
			    sets[i].addrs.v[j].s) == -1)
				return -1;
		if (sets[i].type == RR_CNAME && sets[i].target != NULL &&
		    push_add(up, owner, &sets[i], sets[i].target) == -1)
			return -1;
	}
	return 0;
}

/*
 * An upper bound of the update's size, computed before ldns sees it:
 * ldns 1.8.3 aborts on an assertion when a message outgrows 64 KiB.
 * Owner names after the first are compressed to a 2-byte pointer, as
 * ldns writes them; TSIG is counted with room to spare.
 */
static size_t
update_size(const struct r2 *r2, const char *fqdn, const struct rrset *sets,
    size_t nsets)
{
	size_t i, n;

	n = 12 + strlen(r2->zone) + 2 + 4 + strlen(fqdn) + 2;
	for (i = 0; i < nsets; i++) {
		n += 2 + 10 + sets[i].addrs.n *
		    (2 + 10 + (sets[i].type == RR_AAAA ? 16 : 4));
		if (sets[i].target != NULL)
			n += 2 + 10 + strlen(sets[i].target) + 2;
	}
	if (r2->key_name != NULL)
		n += strlen(r2->key_name) + 2 + 120;
	return n;
}

/*
 * What the reply to an update says.  st is the status of the exchange:
 * LDNS_STATUS_CRYPTO_TSIG_BOGUS when the reply's TSIG did not verify.
 * Apart from the exchange so it can be fuzzed on its own.
 */
static enum perr
update_reply(const struct r2 *r2, const ldns_pkt *ans, ldns_status st,
    const char *fqdn, size_t naddrs, char *err, size_t errlen)
{
	char why[160];
	enum perr rv;

	if (ldns_pkt_get_rcode(ans) != LDNS_RCODE_NOERROR) {
		rv = rcode_class(r2, ans, 0, r2->key_name != NULL,
		    st == LDNS_STATUS_CRYPTO_TSIG_BOGUS, why, sizeof(why));
		snprintf(err, errlen, "server %s %s the update for %s: %s%s",
		    r2->label, rv == PERR_TEMP ? "could not apply" :
		    rv == PERR_AUTH ? "refused" : "rejected", fqdn, why,
		    ldns_pkt_get_rcode(ans) == LDNS_RCODE_SERVFAIL &&
		    naddrs > 100 ? " (BIND refuses RRsets above "
		    "max-records-per-type, 100 by default)" : "");
		return rv;
	}
	if (st != LDNS_STATUS_OK) {
		/* Success we cannot authenticate is no success. */
		snprintf(err, errlen, "server %s answered the update for %s "
		    "without a valid TSIG signature (%s)", r2->label, fqdn,
		    ldns_get_errorstr_by_id(st));
		return PERR_AUTH;
	}
	return PERR_OK;
}

static enum perr
rfc2136_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct r2 *r2 = priv;
	ldns_rr_list *up = NULL;
	ldns_pkt *q = NULL, *ans = NULL;
	ldns_rdf *owner = NULL, *zname;
	ldns_status st;
	uint8_t *wire = NULL;
	size_t i, size, max, naddrs;
	enum perr rv = PERR_INVALID;

	r2->deadline = mono_ms() + r2->timeout_ms;
	if (nsets == 0)
		return PERR_OK;
	max = r2->tcp ? R2_TCP_MAX : R2_UDP_MAX;
	naddrs = 0;
	for (i = 0; i < nsets; i++)
		naddrs += sets[i].addrs.n;
	if ((size = update_size(r2, fqdn, sets, nsets)) > max)
		goto toobig;
	if ((owner = dname_abs(fqdn)) == NULL) {
		snprintf(err, errlen, "%s is not a DNS name", fqdn);
		goto out;
	}
	if ((up = ldns_rr_list_new()) == NULL)
		goto oom;
	if (push_sets(up, owner, sets, nsets) == -1)
		goto oom;
	/* ldns_update_pkt_new takes the zone name and copies the list. */
	if ((zname = dname_abs(r2->zone)) == NULL)
		goto oom;
	if ((q = ldns_update_pkt_new(zname, LDNS_RR_CLASS_IN, NULL, up,
	    NULL)) == NULL) {
		ldns_rdf_deep_free(zname);
		goto oom;
	}
	ldns_pkt_set_rd(q, false);
	ldns_pkt_set_random_id(q);
	/* Signing must be the last change to the message. */
	if (r2->key_name != NULL && (st = ldns_pkt_tsig_sign(q, r2->key_name,
	    r2->key_secret, 300, r2->key_alg, NULL)) != LDNS_STATUS_OK) {
		snprintf(err, errlen, "update for %s: cannot sign with key "
		    "%s: %s", fqdn, r2->key_name, ldns_get_errorstr_by_id(st));
		goto out;
	}
	if (ldns_pkt2wire(&wire, q, &size) != LDNS_STATUS_OK)
		goto oom;
	if (size > max)
		goto toobig;
	if ((rv = r2_send(r2, q, r2->tcp, &ans, &st, err, errlen)) != PERR_OK)
		goto out;
	rv = update_reply(r2, ans, st, fqdn, naddrs, err, errlen);
	goto out;
toobig:
	snprintf(err, errlen, "update for %s: %zu addresses make a message of "
	    "about %zu bytes, above the %zu bytes DNS over %s allows%s", fqdn,
	    naddrs, size, max, r2->tcp ? "TCP" : "UDP",
	    r2->tcp ? "" : " (use protocol = tcp)");
	rv = PERR_INVALID;
	goto out;
oom:
	snprintf(err, errlen, "update for %s: out of memory", fqdn);
	rv = PERR_TEMP;
out:
	free(wire);
	ldns_pkt_free(ans);
	ldns_pkt_free(q);
	ldns_rr_list_deep_free(up);
	ldns_rdf_deep_free(owner);
	return rv;
}

/*
 * A CNAME's target as struct rrset holds it: lower case, no trailing
 * dot; -1 (nothing set) for one that is not a printable host name.
 */
static int
cname_target(const ldns_rdf *rd, struct rrset *set)
{
	char	*s;
	size_t	 len, i;
	int	 rc = -1;

	if (ldns_rdf_get_type(rd) != LDNS_RDF_TYPE_DNAME ||
	    (s = ldns_rdf2str(rd)) == NULL)
		return -1;
	len = strlen(s);
	if (len > 1 && s[len - 1] == '.')
		s[--len] = '\0';
	for (i = 0; i < len; i++) {
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '\\')
			goto out;
		if (s[i] >= 'A' && s[i] <= 'Z')
			s[i] = (char)(s[i] - 'A' + 'a');
	}
	if (len == 0 || len > R2_HOST_MAX - 1)
		goto out;
	set->target = xstrdup(s);
	rc = 0;
out:
	free(s);
	return rc;
}

/*
 * Collects the addresses of type in the answer section owned by qname;
 * -1 with err past RRSET_READ_MAX (set emptied).
 */
static int
collect(const ldns_pkt *ans, const ldns_rdf *qname, ldns_rr_type type,
    struct rrset *set, char *err, size_t errlen)
{
	const ldns_rr_list *an;
	const ldns_rr *rr;
	const ldns_rdf *rd;
	char ip[ADDR_STRLEN];
	struct addr a;
	size_t i;

	an = ldns_pkt_answer(ans);
	for (i = 0; an != NULL && i < ldns_rr_list_rr_count(an); i++) {
		rr = ldns_rr_list_rr(an, i);
		if (ldns_rr_get_type(rr) != type ||
		    ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN ||
		    ldns_dname_compare(ldns_rr_owner(rr), qname) != 0 ||
		    (rd = ldns_rr_rdf(rr, 0)) == NULL)
			continue;
		if (type == LDNS_RR_TYPE_CNAME) {
			/* One CNAME a name; a second one is not ours to keep. */
			if (set->target == NULL && cname_target(rd, set) == 0)
				set->ttl = (long)ldns_rr_ttl(rr);
			continue;
		}
		if (ldns_rdf_size(rd) != (type == LDNS_RR_TYPE_A ? 4u : 16u) ||
		    inet_ntop(type == LDNS_RR_TYPE_A ? AF_INET : AF_INET6,
		    ldns_rdf_data(rd), ip, sizeof(ip)) == NULL)
			continue;
		if (addr_parse(ip, &a) == -1)
			continue;
		if (rrset_read_add(set, &a, err, errlen) == -1) {
			rrset_clear(set);
			return -1;
		}
		if (set->ttl == 0 || (long)ldns_rr_ttl(rr) < set->ttl)
			set->ttl = (long)ldns_rr_ttl(rr);
	}
	rrset_read_end(set);
	return 0;
}

/*
 * What the reply to the query for one RRset (set->type) says: the
 * addresses and ttl in set (NXDOMAIN and NODATA both mean an empty set),
 * or an error.  Apart from the exchange so it can be fuzzed on its own.
 */
static enum perr
read_reply(const struct r2 *r2, const ldns_pkt *ans, const ldns_rdf *qname,
    const char *fqdn, struct rrset *set, char *err, size_t errlen)
{
	ldns_pkt_rcode rc;
	const char *tname;
	char why[160];
	enum perr rv;

	tname = set->type == RR_AAAA ? "AAAA" : set->type == RR_CNAME ?
	    "CNAME" : "A";
	rc = ldns_pkt_get_rcode(ans);
	if (rc != LDNS_RCODE_NOERROR && rc != LDNS_RCODE_NXDOMAIN) {
		rv = rcode_class(r2, ans, 1, 0, 0, why, sizeof(why));
		snprintf(err, errlen, "server %s answered the %s query for %s "
		    "with %s", r2->label, tname, fqdn, why);
		return rv;
	}
	if (!ldns_pkt_aa(ans)) {
		snprintf(err, errlen, "server %s is not authoritative for %s "
		    "(zone %s)", r2->label, fqdn, r2->zone);
		return PERR_NOTFOUND;
	}
	if (collect(ans, qname, ldns_type_of(set->type), set, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "server %s answered the %s query for %s "
		    "with %s", r2->label, tname, fqdn, why);
		return PERR_INVALID;
	}
	return PERR_OK;
}

/* Reads one RRset; a truncated UDP answer is asked again over TCP. */
static enum perr
read_one(struct r2 *r2, const char *fqdn, struct rrset *set, char *err,
    size_t errlen)
{
	ldns_pkt *q = NULL, *ans = NULL;
	ldns_rdf *qname = NULL;
	ldns_rr_type type;
	ldns_status st;
	enum perr rv = PERR_TEMP;
	int tcp;

	type = ldns_type_of(set->type);
	set->ttl = 0;
	addrset_free(&set->addrs);
	free(set->target);
	set->target = NULL;
	if ((qname = dname_abs(fqdn)) == NULL) {
		snprintf(err, errlen, "%s is not a DNS name", fqdn);
		rv = PERR_INVALID;
		goto out;
	}
	r2->deadline = mono_ms() + r2->timeout_ms;
	for (tcp = r2->tcp;; tcp = 1) {
		q = ldns_pkt_query_new(ldns_rdf_clone(qname), type,
		    LDNS_RR_CLASS_IN, 0);
		if (q == NULL) {
			snprintf(err, errlen, "query for %s: out of memory",
			    fqdn);
			goto out;
		}
		ldns_pkt_set_random_id(q);
		if (!tcp)
			ldns_pkt_set_edns_udp_size(q, R2_EDNS_SIZE);
		if ((rv = r2_send(r2, q, tcp, &ans, &st, err, errlen)) !=
		    PERR_OK)
			goto out;
		if (tcp || !ldns_pkt_tc(ans))
			break;
		ldns_pkt_free(ans);
		ldns_pkt_free(q);
		ans = NULL;
		q = NULL;
	}
	rv = read_reply(r2, ans, qname, fqdn, set, err, errlen);
out:
	ldns_pkt_free(ans);
	ldns_pkt_free(q);
	ldns_rdf_deep_free(qname);
	return rv;
}

static enum perr
rfc2136_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	enum perr rv;
	size_t i;

	for (i = 0; i < nsets; i++)
		if ((rv = read_one(priv, fqdn, &sets[i], err, errlen)) !=
		    PERR_OK)
			return rv;
	return PERR_OK;
}

static void
rfc2136_free(void *priv)
{
	r2_free(priv);
}

static const char *
rfc2136_warning(const struct provider_cfg *pc)
{
	if (provider_cfg_get(pc, "keySecret") == NULL)
		return "updates will not be signed (no TSIG key)";
	return NULL;
}

const struct provider_ops rfc2136_ops = {
	.type = "rfc2136",
	.keys = rfc2136_keys,
	/* One UPDATE message is applied whole or not at all (RFC 2136 3.7). */
	.caps = PCAP_CNAME | PCAP_ATOMIC,
	.ttl_min = 0,
	.ttl_max = 2147483647,
	.zone_key = "zone",
	.check = rfc2136_check,
	.warning = rfc2136_warning,
	.create = rfc2136_create,
	.read = rfc2136_read,
	.replace = rfc2136_replace,
	.free = rfc2136_free,
};
