/*
 * libpq and libxml2 loaded at their first use (lazylib.c).
 *
 * ddup-check is not linked with either: only a PostgreSQL state needs
 * libpq, only Route 53 libxml2 (which brings in ICU), and mapping and
 * relocating them cost every run about 6 million instructions and 2 MB
 * of memory before main().  lazylib.c defines the functions of theirs
 * that the program calls; the first call loads the library with
 * dlopen() and each function forwards to the real one.  The unit tests
 * and fuzz targets are linked with both libraries as before: the
 * forwarders then find them already loaded.
 *
 * A library that cannot be loaded (a broken installation: the Debian
 * package depends on both) ends the run with one line on stderr and
 * LAZYLIB_EXIT_PQ or LAZYLIB_EXIT_XML.
 */

#ifndef DDUP_LAZYLIB_H
#define DDUP_LAZYLIB_H

#define LAZYLIB_EXIT_PQ		4	/* the state cannot be opened */
#define LAZYLIB_EXIT_XML	1	/* a DNS update failed */

#endif
