/*
 * The manual agrees with the code: every key the configuration reader
 * knows and every provider type with each of its keys is documented in
 * doc/ddup.ini.5.  The lists come from the code's own tables
 * (config_key_at(), provider_at()), so a key added without its
 * documentation fails here.  Run from the top of the source tree, as
 * make unit does.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "provider.h"

#define INI_PAGE	"doc/ddup.ini.5"

static char *
slurp(const char *path)
{
	FILE	*f;
	char	*buf;
	long	 len;

	f = fopen(path, "r");
	if (f == NULL)
		fail_msg("%s: cannot open (run from the source tree)", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/*
 * Whether [from, to) holds a line ".It Cm KEY" (the key as a list item,
 * followed by the end of the line or a blank).
 */
static int
has_item(const char *from, const char *to, const char *key)
{
	const char	*p;
	size_t		 klen = strlen(key);

	for (p = from; p < to && (p = strstr(p, "\n.It Cm ")) != NULL &&
	    p < to; p++) {
		p += strlen("\n.It Cm ");
		if (strncmp(p, key, klen) == 0 &&
		    (p[klen] == '\n' || p[klen] == ' '))
			return 1;
	}
	return 0;
}

/* [*from, *to) becomes the text of ".Sh NAME" up to the next .Sh. */
static int
section(const char *page, const char *name, const char **from,
    const char **to)
{
	char	 head[64];

	snprintf(head, sizeof(head), "\n.Sh %s\n", name);
	if ((*from = strstr(page, head)) == NULL)
		return 0;
	*from += strlen(head) - 1;
	if ((*to = strstr(*from, "\n.Sh ")) == NULL)
		*to = *from + strlen(*from);
	return 1;
}

static int
in_section(const char *page, const char *name, const char *key)
{
	const char	*from, *to;

	return section(page, name, &from, &to) && has_item(from, to, key);
}

/*
 * Each key has its item in the part of the page for where it may be
 * written: a domain key (written at the top too, as every domain's
 * default) in DOMAINS or POLICIES, the others in TOP-LEVEL KEYS,
 * ENDPOINTS or NOTIFICATIONS; a key of two places in both.
 */
static void
test_keys_documented(void **state)
{
	const char	*key;
	char		*page;
	size_t		 i, missing = 0;
	int		 where;

	(void)state;
	page = slurp(INI_PAGE);
	for (i = 0; (key = config_key_at(i)) != NULL; i++) {
		where = config_key_where(i);
		assert_true(where != 0);
		if ((where & CFG_KEY_DOMAIN) != 0 &&
		    !in_section(page, "DOMAINS", key) &&
		    !in_section(page, "POLICIES", key)) {
			print_error("%s: domain key '%s' has no \".It Cm %s\" "
			    "in DOMAINS or POLICIES\n", INI_PAGE, key, key);
			missing++;
		}
		if (where == CFG_KEY_TOP &&
		    !in_section(page, "TOP-LEVEL KEYS", key)) {
			print_error("%s: key '%s' has no \".It Cm %s\" in "
			    "TOP-LEVEL KEYS\n", INI_PAGE, key, key);
			missing++;
		}
		if ((where & CFG_KEY_ENDPOINT) != 0 &&
		    !in_section(page, "ENDPOINTS", key)) {
			print_error("%s: endpoint key '%s' has no \".It Cm %s\" "
			    "in ENDPOINTS\n", INI_PAGE, key, key);
			missing++;
		}
		if ((where & CFG_KEY_NOTIFY) != 0 &&
		    !in_section(page, "NOTIFICATIONS", key)) {
			print_error("%s: [notify] key '%s' has no \".It Cm %s\" "
			    "in NOTIFICATIONS\n", INI_PAGE, key, key);
			missing++;
		}
	}
	assert_true(i > 20);		/* the table was really walked */
	assert_int_equal(config_key_where(i), 0);
	free(page);
	assert_int_equal(missing, 0);
}

/*
 * Each provider type has its subsection, .Ss "type = TYPE", listing
 * every key of its table.
 */
static void
test_provider_keys_documented(void **state)
{
	const struct provider_ops *ops;
	const char	*start, *end, *e2;
	char		*page, head[128];
	size_t		 i, j, missing = 0;

	(void)state;
	page = slurp(INI_PAGE);
	for (i = 0; (ops = provider_at(i)) != NULL; i++) {
		snprintf(head, sizeof(head), "\n.Ss \"type = %s\"\n",
		    ops->type);
		start = strstr(page, head);
		if (start == NULL) {
			print_error("%s: provider type %s has no %s",
			    INI_PAGE, ops->type, head + 1);
			missing++;
			continue;
		}
		start += strlen(head) - 1;
		end = strstr(start, "\n.Ss ");
		e2 = strstr(start, "\n.Sh ");
		if (end == NULL || (e2 != NULL && e2 < end))
			end = e2 != NULL ? e2 : start + strlen(start);
		if (!has_item(start, end, "type")) {
			print_error("%s: type %s: no \".It Cm type\"\n",
			    INI_PAGE, ops->type);
			missing++;
		}
		for (j = 0; ops->keys[j].name != NULL; j++)
			if (!has_item(start, end, ops->keys[j].name)) {
				print_error("%s: type %s: key '%s' has no "
				    "\".It Cm %s\"\n", INI_PAGE, ops->type,
				    ops->keys[j].name, ops->keys[j].name);
				missing++;
			}
	}
	assert_true(i >= 6);
	free(page);
	assert_int_equal(missing, 0);
}

/* The check itself: a key that is not there is not found. */
static void
test_has_item(void **state)
{
	static const char text[] = "x\n.It Cm ttl\n.It Cm ttlMax Ar n\n"
	    ".Cm attempts\n";

	(void)state;
	assert_true(has_item(text, text + sizeof(text) - 1, "ttl"));
	assert_true(has_item(text, text + sizeof(text) - 1, "ttlMax"));
	assert_false(has_item(text, text + sizeof(text) - 1, "ttlM"));
	assert_false(has_item(text, text + sizeof(text) - 1, "attempts"));
	assert_false(has_item(text, text + 5, "ttlMax"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_has_item),
		cmocka_unit_test(test_keys_documented),
		cmocka_unit_test(test_provider_keys_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
