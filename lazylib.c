/*
 * libpq and libxml2 loaded at their first use: see lazylib.h.
 *
 * Each forwarder has the prototype of the library's header (a header
 * that changes one makes this file fail to build, not misbehave) and
 * keeps the real function's address after the first call.  The program
 * exports none of these names (it is not linked with -rdynamic), so the
 * loaded library's own calls stay inside it.
 */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <libpq-fe.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "lazylib.h"

/* The sonames the program was built against (the Makefile's, else these). */
#ifndef LAZYLIB_PQ
#define LAZYLIB_PQ	"libpq.so.5"
#endif
#ifndef LAZYLIB_XML
#define LAZYLIB_XML	"libxml2.so.2"
#endif

struct lazylib {
	const char	*soname;
	const char	*what;		/* what needs it, for the message */
	int		 status;	/* exit status when it cannot be loaded */
	void		*handle;
};

static struct lazylib pq = { LAZYLIB_PQ, "a PostgreSQL state", LAZYLIB_EXIT_PQ,
    NULL };
static struct lazylib xml = { LAZYLIB_XML, "Route 53", LAZYLIB_EXIT_XML,
    NULL };

/* The address of sym in lib, loading lib on first use. */
static void *
lazylib_sym(struct lazylib *lib, const char *sym)
{
	const char	*why;
	void		*p;

	if (lib->handle == NULL &&
	    (lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL)) == NULL)
		goto fail;
	if ((p = dlsym(lib->handle, sym)) != NULL)
		return p;
 fail:
	why = dlerror();
	fprintf(stderr, "ddup-check: cannot load %s (%s needs it): %s\n",
	    lib->soname, lib->what, why != NULL ? why : sym);
	exit(lib->status);
}

/* name's forwarder: params and args spelt out, ret the return type. */
#define FWD(lib, ret, name, params, args)				\
ret name params								\
{									\
	static __typeof__(name) *real;					\
									\
	if (real == NULL)						\
		real = (__typeof__(name) *)lazylib_sym(&(lib), #name);	\
	return real args;						\
}

#define FWD_VOID(lib, name, params, args)				\
void name params							\
{									\
	static __typeof__(name) *real;					\
									\
	if (real == NULL)						\
		real = (__typeof__(name) *)lazylib_sym(&(lib), #name);	\
	real args;							\
}

/* libpq: state/pg*.c, and config_build_state.c for a PostgreSQL URI. */
FWD(pq, PGconn *, PQconnectdbParams, (const char *const *k,
    const char *const *v, int expand), (k, v, expand))
FWD(pq, ConnStatusType, PQstatus, (const PGconn *c), (c))
FWD(pq, PGTransactionStatusType, PQtransactionStatus, (const PGconn *c), (c))
FWD(pq, char *, PQerrorMessage, (const PGconn *c), (c))
FWD(pq, int, PQsocket, (const PGconn *c), (c))
FWD_VOID(pq, PQfinish, (PGconn *c), (c))
FWD(pq, PGresult *, PQexec, (PGconn *c, const char *q), (c, q))
FWD(pq, PGresult *, PQexecParams, (PGconn *c, const char *q, int n,
    const Oid *t, const char *const *v, const int *l, const int *f, int rf),
    (c, q, n, t, v, l, f, rf))
FWD(pq, int, PQsendQueryParams, (PGconn *c, const char *q, int n,
    const Oid *t, const char *const *v, const int *l, const int *f, int rf),
    (c, q, n, t, v, l, f, rf))
FWD(pq, PGresult *, PQgetResult, (PGconn *c), (c))
FWD(pq, int, PQconsumeInput, (PGconn *c), (c))
FWD(pq, int, PQenterPipelineMode, (PGconn *c), (c))
FWD(pq, int, PQexitPipelineMode, (PGconn *c), (c))
FWD(pq, int, PQpipelineSync, (PGconn *c), (c))
FWD(pq, int, PQsetnonblocking, (PGconn *c, int arg), (c, arg))
FWD(pq, int, PQflush, (PGconn *c), (c))
FWD(pq, ExecStatusType, PQresultStatus, (const PGresult *r), (r))
FWD(pq, char *, PQresultErrorMessage, (const PGresult *r), (r))
FWD(pq, char *, PQresultErrorField, (const PGresult *r, int code), (r, code))
FWD(pq, int, PQntuples, (const PGresult *r), (r))
FWD(pq, int, PQnfields, (const PGresult *r), (r))
FWD(pq, char *, PQgetvalue, (const PGresult *r, int row, int col),
    (r, row, col))
FWD(pq, int, PQgetisnull, (const PGresult *r, int row, int col),
    (r, row, col))
FWD_VOID(pq, PQclear, (PGresult *r), (r))
FWD(pq, PQconninfoOption *, PQconninfoParse, (const char *s, char **err),
    (s, err))
FWD_VOID(pq, PQconninfoFree, (PQconninfoOption *o), (o))
FWD_VOID(pq, PQfreemem, (void *p), (p))

/* libxml2: providers/route53.c. */
FWD(xml, xmlDocPtr, xmlReadMemory, (const char *b, int n, const char *url,
    const char *enc, int opts), (b, n, url, enc, opts))
FWD_VOID(xml, xmlSetGenericErrorFunc, (void *ctx, xmlGenericErrorFunc h),
    (ctx, h))
FWD_VOID(xml, xmlSetStructuredErrorFunc, (void *ctx,
    xmlStructuredErrorFunc h), (ctx, h))
FWD_VOID(xml, xmlResetLastError, (void), ())
FWD(xml, xmlErrorPtr, xmlGetLastError, (void), ())
FWD(xml, xmlNodePtr, xmlDocGetRootElement, (const xmlDoc *d), (d))
FWD(xml, xmlNodePtr, xmlDocSetRootElement, (xmlDocPtr d, xmlNodePtr n),
    (d, n))
FWD(xml, int, xmlStrcmp, (const xmlChar *a, const xmlChar *b), (a, b))
FWD_VOID(xml, xmlFreeDoc, (xmlDocPtr d), (d))
FWD(xml, xmlDocPtr, xmlNewDoc, (const xmlChar *v), (v))
FWD(xml, xmlNodePtr, xmlNewNode, (xmlNsPtr ns, const xmlChar *name),
    (ns, name))
FWD(xml, xmlNsPtr, xmlNewNs, (xmlNodePtr n, const xmlChar *href,
    const xmlChar *prefix), (n, href, prefix))
FWD_VOID(xml, xmlSetNs, (xmlNodePtr n, xmlNsPtr ns), (n, ns))
FWD(xml, xmlNodePtr, xmlNewChild, (xmlNodePtr p, xmlNsPtr ns,
    const xmlChar *name, const xmlChar *content), (p, ns, name, content))
FWD(xml, xmlNodePtr, xmlNewTextChild, (xmlNodePtr p, xmlNsPtr ns,
    const xmlChar *name, const xmlChar *content), (p, ns, name, content))
FWD_VOID(xml, xmlDocDumpMemoryEnc, (xmlDocPtr d, xmlChar **out, int *len,
    const char *enc), (d, out, len, enc))

/*
 * xmlFree is a variable holding libxml2's free function, not a function:
 * ours starts as one that takes the library's value on first use.
 */
static void
xml_free_first(void *p)
{
	xmlFree = *(xmlFreeFunc *)lazylib_sym(&xml, "xmlFree");
	xmlFree(p);
}

xmlFreeFunc xmlFree = xml_free_first;
