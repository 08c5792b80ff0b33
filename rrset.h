#ifndef DDUP_RRSET_H
#define DDUP_RRSET_H

/*
 * Typed records: the RRsets ddup publishes for a name.  A and AAAA hold
 * addresses; a CNAME holds its one target, a host name.  The type's
 * value indexes per-type arrays (state, publication).
 */

#include "util.h"

enum rrtype {
	RR_A = 0,
	RR_AAAA = 1,
	RR_CNAME = 2
};
#define RR_NTYPES	3

/*
 * One RRset of a name.  Nothing held (no address, no target) means the
 * name has no such records (read) or "delete the RRset" (replace); its
 * ttl is then 0 on read and meaningless on replace.  proxied is
 * Cloudflare's per-record flag, for providers with PCAP_PROXIED.
 * Zero-initialise it (then set type); free with rrset_clear().
 */
struct rrset {
	enum rrtype	 type;
	long		 ttl;
	int		 proxied;
	struct addrset	 addrs;		/* A, AAAA */
	char		*target;	/* CNAME: no trailing dot; NULL: none */
};

/* "A", "AAAA", "CNAME". */
const char	*rrtype_str(enum rrtype t);
/* The type named s (case-sensitive, as stored); -1 if none. */
int		 rrtype_parse(const char *s, enum rrtype *t);
/* The address type of an address family (4 or 6). */
enum rrtype	 rrtype_of_family(int family);

/* Whether the RRset holds no record. */
int		 rrset_empty(const struct rrset *rs);
/* Equal as DNS sees it: same records, and the same TTL and flag if any. */
int		 rrset_same(const struct rrset *a, const struct rrset *b);
/* dst (cleared first) becomes a copy of src. */
void		 rrset_copy(struct rrset *dst, const struct rrset *src);
/*
 * The records as stored and logged: the addresses space-separated, or
 * the target; "" when empty.  malloc'd.
 */
char		*rrset_join(const struct rrset *rs);
/* The inverse of rrset_join for rs->type; -1 (rs cleared) on junk. */
int		 rrset_parse(struct rrset *rs, const char *text);
/* Frees the records; type stays, the rest is zeroed. */
void		 rrset_clear(struct rrset *rs);
/*
 * A host name (a CNAME's target) as struct rrset holds it, in place:
 * lower case, without a final dot.  0 when s is no host name (empty,
 * over 253 bytes, an empty label or one over 63 bytes, a byte outside
 * [a-z0-9._-]).
 */
int		 rrset_host_canon(char *s);

/*
 * Reading records as an API lists them: in its own order, maybe with
 * duplicates, maybe among many records of other names and types (those
 * are not ddup's: the caller passes them over, and they count for
 * nothing).  An address of the set's type goes in with rrset_read_add(),
 * appended in O(1); rrset_read_end() then sorts the set and merges its
 * duplicates in O(n log n), after which it is an RRset again.  Inserting
 * each record in order instead would move the set's tail every time:
 * O(n^2) for an answer of many records.
 *
 * A name with more than RRSET_READ_MAX records of one managed type is no
 * set ddup published (each endpoint is one record): the read fails with
 * a message saying so rather than take, compare and delete them all.
 */
#define RRSET_READ_MAX	1000

/*
 * Whether a read that holds n records of type t may take one more: 0,
 * or -1 with "more than 1000 A records of the name: ..." in err.
 */
int		 rrset_read_room(size_t n, enum rrtype t, char *err,
		    size_t errlen);
/* Appends a to rs (an A or AAAA set); -1 with err past RRSET_READ_MAX. */
int		 rrset_read_add(struct rrset *rs, const struct addr *a,
		    char *err, size_t errlen);
/* Sorts rs's addresses and merges duplicates. */
void		 rrset_read_end(struct rrset *rs);

/*
 * The most addresses a log line lists: past it, rrset_addrs_shown()
 * gives the first ones and "... (N records)".
 */
#define RRSET_SHOWN_MAX	16

/* addrset_join() cut at RRSET_SHOWN_MAX addresses; malloc'd. */
char		*rrset_addrs_shown(const struct addrset *set);

/*
 * How an API writes a name's RRsets as a JSON array of objects, each
 * with a type, a ttl and an array of record strings (addresses, or a
 * CNAME's one target): the member names, and what its messages call an
 * element and a value.
 */
struct rrset_json {
	const char	*item;		/* "RRset": an element of the array */
	const char	*type;		/* "type" */
	const char	*ttl;		/* "ttl" */
	const char	*values;	/* "records" */
	const char	*value;		/* "record": an element of values */
	/*
	 * A CNAME target without a final dot is relative to this zone
	 * (Gandi); NULL: every target is absolute, dot or not (deSEC).
	 */
	const char	*origin;
};

/*
 * Fills each of sets (type set by the caller: A, AAAA or CNAME) from
 * such an array in buf; elements of other types are skipped, a second
 * one of a type is junk, and so are more than RRSET_READ_MAX records of
 * a type, a CNAME of more than one record, and a target that is no host
 * name (stored lower case, without its final dot).  0, or -1 with the
 * reason in err (printable, one line) and nothing held.
 */
int		 rrset_parse_json(const char *buf, size_t len,
		    const struct rrset_json *js, struct rrset *sets,
		    size_t nsets, char *err, size_t errlen);

#endif
