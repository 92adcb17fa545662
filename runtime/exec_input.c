/* exec_input.c - the INPUT buffer of a bound instance (rt.h): where it lives on the device
 * (bgnn_session_input_device_ptr, to prove a caller's array is used in place) and pointing it
 * at another caller-owned device array of the same shape without binding again (a new
 * feature tensor each call from Python costs a pointer swap, not a re-upload of the weights).
 * The CUDA graphs (GRAPH mode's, and the per-graph kernel's) hold the old pointer, so they are
 * dropped and recaptured; the per-graph kernel's only once a pointer has run twice (a caller
 * that swaps every run gets plain launches, not a capture a run). */
#include "rt.h"

BgCUdeviceptr bg_gpu_run_input_ptr(const BgPlan *p, const BgGpuRun *r) {
    if (!r->ptr) return 0;
    for (int b = 0; b < p->nbufs && b < r->nbufs; b++)
        if (p->bufs[b].role == BG_ROLE_INPUT) return r->ptr[b];
    return 0;
}

void bg_gpu_run_set_input(BgGpu *g, const BgPlan *p, BgGpuRun *r, BgCUdeviceptr dptr) {
    if (!r->ptr) return;
    bool changed = false;
    for (int b = 0; b < p->nbufs && b < r->nbufs; b++)
        if (p->bufs[b].role == BG_ROLE_INPUT && r->borrowed[b] && r->ptr[b] != dptr) {
            r->ptr[b] = dptr;
            changed = true;
        }
    if (!changed) return;
    if (r->graph_exec || r->blocks_graph_exec) g->cu.cuStreamSynchronize(r->last_stream); /* not destroyed in flight */
    if (r->graph_exec) g->cu.cuGraphExecDestroy(r->graph_exec);
    if (r->graph) g->cu.cuGraphDestroy(r->graph);
    if (r->blocks_graph_exec) g->cu.cuGraphExecDestroy(r->blocks_graph_exec);
    if (r->blocks_graph) g->cu.cuGraphDestroy(r->blocks_graph);
    r->graph_exec = NULL;
    r->graph = NULL;
    r->blocks_graph_exec = NULL;
    r->blocks_graph = NULL;
    r->blocks_plain = 1;
}
