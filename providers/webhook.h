#ifndef DDUP_PROVIDERS_WEBHOOK_H
#define DDUP_PROVIDERS_WEBHOOK_H

/*
 * The JSON of external-dns's webhook provider protocol, version 1
 * (ddup.ini(5), type = webhook), without I/O: the domain filter that
 * `GET /` negotiates, the endpoints of `GET /records`, and the changes
 * `POST /records` sends.  Private to providers/webhook*.c (and their
 * unit tests and fuzz target).
 *
 * An endpoint is {"dnsName", "recordType", "recordTTL", "targets",
 * "setIdentifier", "labels", "providerSpecific"}; names have no final
 * dot.  The changes are {"create", "updateOld", "updateNew", "delete"},
 * each a list of endpoints, updateOld and updateNew paired by index.
 */

#include <stddef.h>

#include <jansson.h>

#include "rrset.h"

/* The media type of every body, and the protocol's version. */
#define WH_MEDIA	"application/external.dns.webhook+json;version=1"

/*
 * Whether fqdn is inside the domain filter of a negotiation answer
 * ({"include": [...], "exclude": [...]} as external-dns writes it, or
 * {"filters": [...]} as its OpenAPI document names the list; an empty
 * or absent list takes every name), matched as external-dns matches:
 * a filter "example.com" takes the name and the names under it, ".example.com"
 * the names under it only; case does not matter.  A regular expression
 * (regexInclude, regexExclude) is refused: ddup does not evaluate one.
 * 1 inside; 0 outside, err saying which list; -1 not a filter, err
 * saying why.  err is printable.  Any bytes.
 */
int	 wh_filter_match(const char *buf, size_t len, const char *fqdn,
	    char *err, size_t errlen);

/*
 * Reads the endpoints of a records answer (an array, or null for none)
 * into each of sets (type set by the caller: A, AAAA or CNAME) for the
 * name fqdn; cur[k] becomes the endpoint of that type as listed (a new
 * reference, for the changes to name it as the server wrote it) or
 * NULL.  Endpoints of other names and types are passed over; two of
 * one type of the name, a target that is not of the type, a CNAME of
 * more than one target, or a TTL out of range are junk.  An absent TTL
 * is 0 (the server's default).  0, or -1 with err (printable) and
 * nothing held.  Any bytes.
 */
int	 wh_records_parse(const char *buf, size_t len, const char *fqdn,
	    struct rrset *sets, json_t **cur, size_t nsets, char *err,
	    size_t errlen);

/*
 * The body of the POST that turns the name's sets from have (with the
 * endpoints cur, from wh_records_parse()) into want, type by type: a
 * type the name lacks is created, one that changes is an update (the
 * old endpoint as listed, the new one a copy with its targets and TTL
 * replaced, its labels and identifier kept), one emptied is deleted.
 * NULL when nothing changes.  malloc'd compact JSON.
 */
char	*wh_changes(const char *fqdn, json_t *const *cur,
	    const struct rrset *have, const struct rrset *want, size_t nsets);

/* Drops the references of cur[0..n) and sets them to NULL. */
void	 wh_cur_free(json_t **cur, size_t n);

#endif
