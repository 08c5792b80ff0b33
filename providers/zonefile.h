#ifndef DDUP_PROVIDERS_ZONEFILE_H
#define DDUP_PROVIDERS_ZONEFILE_H

/*
 * The text of a zonefile provider's file (ddup.ini(5), type = zonefile),
 * without I/O: the block of records ddup writes, read back, changed for
 * one name and written again; the template's {serial} and {records};
 * the serial rule.  Private to providers/zonefile*.c (and their unit
 * tests and fuzz target).
 *
 * The block, alone in the file or where the template has {records}:
 *
 *	; ddup-check records: begin (written by ddup-check: edits are lost)
 *	; ddup-check serial 1764745000
 *	www.example.com. 60 IN A 192.0.2.1
 *	; ddup-check records: end
 *
 * Names are absolute (a final dot, lower case), so the block means the
 * same whatever $ORIGIN the file that includes it has.
 */

#include <stddef.h>

#include "rrset.h"

/* The file is read whole: a larger one is refused. */
#define ZF_FILE_MAX	((size_t)16 * 1024 * 1024)
#define ZF_BEGIN	"; ddup-check records: begin"
#define ZF_END		"; ddup-check records: end"
#define ZF_SERIAL	"; ddup-check serial "

/* One record of the block. */
struct zf_rec {
	char		*name;		/* lower case, no final dot */
	enum rrtype	 type;
	long		 ttl;
	char		*data;		/* canonical address, or target without
					   its final dot */
};

/* What a file holds, as far as ddup is concerned. */
struct zf_file {
	struct zf_rec	*v;
	size_t		 n, cap;
	int		 has_block;	/* the begin line was found */
	int		 has_serial;
	unsigned long long serial;	/* the last one written */
};

/*
 * Reads buf (not NUL-terminated, any bytes): the text outside the block
 * is passed over; inside it every line must be one ddup writes.  No
 * block at all is no record (has_block 0).  0, or -1 with the reason
 * ("line N: ...", printable, one line) in err and f empty.
 */
int	 zf_parse(const char *buf, size_t len, struct zf_file *f, char *err,
	    size_t errlen);
void	 zf_free(struct zf_file *f);

/*
 * Fills each of sets (type set by the caller) with name's records in f
 * (the lowest TTL of a set is its TTL).  0, or -1 with err set (more
 * than RRSET_READ_MAX records, two CNAMEs) and the sets empty.
 */
int	 zf_sets(const struct zf_file *f, const char *name,
	    struct rrset *sets, size_t nsets, char *err, size_t errlen);

/*
 * Makes name's records of each set's type exactly that set; the records
 * of other names and types stay.
 */
void	 zf_replace(struct zf_file *f, const char *name,
	    const struct rrset *sets, size_t nsets);

/*
 * The block for f with serial: the records sorted by name, type and
 * data, duplicates once.  malloc'd, NUL-terminated, *len its length.
 */
char	*zf_block(struct zf_file *f, unsigned long long serial, size_t *len);

/*
 * The file: the block alone (tmpl NULL), or tmpl with {records} (exactly
 * once, at the start of a line) replaced by the block and each {serial}
 * by serial.  malloc'd, *len its length; NULL with err set when tmpl has
 * not one {records} at a line's start.
 */
char	*zf_render(const char *tmpl, size_t tlen, const char *block,
	    size_t blen, unsigned long long serial, size_t *len, char *err,
	    size_t errlen);

/*
 * The serial after last at Unix time now: the larger of last + 1 and
 * now, modulo 2^32 (RFC 1982 serial arithmetic: past 4294967295 it
 * wraps, which a secondary takes as an increase).
 */
unsigned long long zf_serial_next(unsigned long long last, long long now);

#endif
