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
 * How an API writes a name's address RRsets as a JSON array of objects,
 * each with a type, a ttl and an array of address strings: the member
 * names, and what its messages call an element and a value.
 */
struct rrset_json {
	const char	*item;		/* "RRset": an element of the array */
	const char	*type;		/* "type" */
	const char	*ttl;		/* "ttl" */
	const char	*values;	/* "records" */
	const char	*value;		/* "record": an element of values */
};

/*
 * Fills each of sets (type set by the caller: A or AAAA) from such an
 * array in buf; elements of other types are skipped, a second one of a
 * type is junk.  0, or -1 with the reason in err (printable, one line)
 * and nothing held.
 */
int		 rrset_parse_json(const char *buf, size_t len,
		    const struct rrset_json *js, struct rrset *sets,
		    size_t nsets, char *err, size_t errlen);

#endif
