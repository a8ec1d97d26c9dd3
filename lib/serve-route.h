/* The API's routes (docs/api.md): method + path -> what and which ids.
 * Pure: no allocation, no syscalls (fuzzed: tests/fuzz/fuzz_route.c). */
#pragma once
#include <stddef.h>

enum route_kind {
	R_NONE = 0,        /* no such path: 404 */
	R_BAD_METHOD,      /* the path exists, not with this method: 405 */
	R_SESSIONS_CREATE, /* POST /v1/sessions */
	R_SESSION_GET,     /* GET /v1/sessions/{id} */
	R_SESSION_DELETE,  /* DELETE /v1/sessions/{id} */
	R_EXEC,            /* POST /v1/sessions/{id}/exec */
	R_EXEC_GET,        /* GET /v1/sessions/{id}/exec/{eid} */
	R_EXEC_SIGNAL,     /* POST /v1/sessions/{id}/exec/{eid}/signal */
	R_EXEC_RESIZE,     /* POST /v1/sessions/{id}/exec/{eid}/resize */
	R_FILE_GET,        /* GET /v1/sessions/{id}/files */
	R_FILE_PUT,        /* PUT /v1/sessions/{id}/files */
	R_FILE_DELETE,     /* DELETE /v1/sessions/{id}/files */
	R_FILE_LIST,       /* GET /v1/sessions/{id}/files/list */
	R_RUNS_CREATE,     /* POST /v1/runs */
	R_RUN_GET,         /* GET /v1/runs/{id} */
	R_POOL_GET,        /* GET /v1/pool */
	R_SESSIONS_LIST,   /* GET /v1/sessions */
	R_SESSION_REPORT,  /* GET /v1/sessions/{id}/report */
	R_EXEC_OUTPUT,     /* GET /v1/sessions/{id}/exec/{eid}/output */
	R_HEALTH,          /* GET /v1/health (no token) */
	R_METRICS,         /* GET /v1/metrics */
	R_VERSION,         /* GET /v1/version */
	R_SESSION_CHANGES, /* GET /v1/sessions/{id}/changes */
	R_SESSION_PAUSE,   /* POST /v1/sessions/{id}/pause */
	R_SESSION_RESUME,  /* POST /v1/sessions/{id}/resume */
	R_SNAPSHOT_TAKE,   /* POST /v1/sessions/{id}/snapshots */
	R_SNAPSHOTS_LIST,  /* GET /v1/sessions/{id}/snapshots */
	R_SNAPSHOT_DELETE, /* DELETE /v1/sessions/{id}/snapshots/{pid} */
	R_SESSION_FORK,    /* POST /v1/sessions/{id}/fork */
	R_SESSION_RESTORE, /* POST /v1/sessions/{id}/restore */
	R_SNAPSHOT_CHANGES, /* GET /v1/sessions/{id}/snapshots/{pid}/changes */
	R_SNAPSHOT_CHANGESET, /* POST /v1/sessions/{id}/snapshots/{pid}/changeset */
};

/* ids are "s-", "e-", "r-" or "p-" and 16 lower-case hex digits. */
#define ROUTE_ID_LEN 18

struct route {
	enum route_kind kind;
	char sid[ROUTE_ID_LEN + 1]; /* session or run id */
	char eid[ROUTE_ID_LEN + 1]; /* exec id, or snapshot id ("p-") */
};

/* Parse; a query string is not part of path. Returns r->kind. */
enum route_kind route_parse(const char *method, const char *path, struct route *r);
/* Is s a well-formed id with this prefix ("s-", "e-", "r-")? */
int route_id_valid(const char *s, const char *prefix);
