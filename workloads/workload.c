/* workload.c -- the registry behind WORKLOAD_REGISTER (kept in name order). */
#include "workload.h"

#include <string.h>

static workload_t *registry;

void workload_register(workload_t *w)
{
    workload_t **p = &registry;
    while (*p && strcmp((*p)->name, w->name) < 0)
        p = &(*p)->next;
    w->next = *p;
    *p = w;
}

workload_t *workload_first(void) { return registry; }

workload_t *workload_find(const char *name)
{
    for (workload_t *w = registry; w; w = w->next)
        if (strcmp(w->name, name) == 0)
            return w;
    return 0;
}

int workload_nargs(const workload_t *w)
{
    int n = 0;
    while (n < WL_MAX_ARGS && w->arg_names[n])
        n++;
    return n;
}
