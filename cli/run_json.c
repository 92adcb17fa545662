/* run_json.c - the JSON form of `bgnnc run` (--json): one object on stdout with the model,
 * target, data sizes, accuracy per split, times (ms) and, on the GPU, how the model ran.
 * Written with the library's JSON writer (base/json.c: escaped strings, finite numbers).
 * docs/api.md lists the fields. */
#include "cli.h"
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>

void cli_print_run_json(const CliRunReport *r) {
    BgJson j;
    bg_json_init(&j);
    bg_json_object(&j, NULL);
    bg_json_bool(&j, "ok", true);
    bg_json_string(&j, "model", r->model);
    bg_json_string(&j, "model_file", r->model_file);
    bg_json_string(&j, "target", r->target);
    bg_json_string(&j, "device", r->device);
    bg_json_string(&j, "data", r->data);
    bg_json_string(&j, "graph_file", r->graph_file);
    bg_json_int(&j, "nodes", r->nodes);
    bg_json_int(&j, "edges", r->edges);
    bg_json_int(&j, "graphs", r->graphs);
    bg_json_string(&j, "output", r->output);
    if (r->nacc) {
        bg_json_object(&j, "accuracy");
        for (int i = 0; i < r->nacc; i++) bg_json_number(&j, r->acc_name[i], r->acc[i]);
        bg_json_end_object(&j);
    } else {
        bg_json_null(&j, "accuracy");
    }
    bg_json_object(&j, "time_ms");
    bg_json_number(&j, "compile", r->compile_ms);
    bg_json_number(&j, "load", r->load_ms);
    bg_json_number(&j, "bind", r->bind_ms);
    bg_json_number(&j, "inference", r->inference_ms);
    bg_json_end_object(&j);
    bg_json_int(&j, "repeat", r->repeat);
    if (r->exec) {
        bg_json_object(&j, "gpu");
        if (r->cache_hit >= 0) bg_json_bool(&j, "cache_hit", r->cache_hit);
        bg_json_string(&j, "exec", r->exec);
        bg_json_int(&j, "kernels", r->kernels);
        if (r->coop_grid) bg_json_int(&j, "coop_grid", r->coop_grid);
        if (r->coop_refused && *r->coop_refused) bg_json_string(&j, "coop_refused", r->coop_refused);
        if (r->auto_ms[1] > 0) {
            bg_json_object(&j, "auto_ms");
            if (r->auto_ms[0] > 0) bg_json_number(&j, "coop", r->auto_ms[0]);
            else bg_json_null(&j, "coop");
            bg_json_number(&j, "graph", r->auto_ms[1]);
            bg_json_end_object(&j);
        }
        if (r->nprofile) {
            bg_json_array(&j, "profile");
            for (int i = 0; i < r->nprofile; i++) {
                bg_json_object(&j, NULL);
                bg_json_string(&j, "kernel", r->profile_kernel[i]);
                bg_json_number(&j, "us", 1000 * r->profile_ms[i]);
                bg_json_end_object(&j);
            }
            bg_json_end_array(&j);
        }
        bg_json_end_object(&j);
    }
    bg_json_string(&j, "logits_file", r->logits_file);
    bg_json_end_object(&j);
    char *s = bg_json_take(&j);
    fputs(s, stdout);
    free(s);
}

void cli_print_error_json(int rc, const char *text) {
    BgJson j;
    bg_json_init(&j);
    bg_json_object(&j, NULL);
    bg_json_bool(&j, "ok", false);
    bg_json_int(&j, "exit_status", rc);
    bg_json_string(&j, "error", text ? text : "");
    bg_json_end_object(&j);
    char *s = bg_json_take(&j);
    fputs(s, stdout);
    free(s);
}
