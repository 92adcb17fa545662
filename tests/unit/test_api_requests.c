/* test_api_requests.c - bgnn_session_set_requests (CPU target): k feature sets a run over one
 * graph.  Request r's rows of every output must equal, byte for byte, a run of request r alone:
 * gcn_bin on Cora (node outputs; three different feature sets), gcn_bin for MUTAG on its
 * 188-graph batch (graph outputs, graph_ptr copied per request) and on one MUTAG graph bound
 * without graph_ptr (its readout: one row per request).  Also: accuracy scores the first
 * request, features of the wrong height are refused naming both heights, k < 1 is refused,
 * and going back to k = 1 gives the single run again.  The copies themselves
 * (loaders/graph_replicate.c) are checked on a small batch. */
#include "reference.h"
#include "bgnn/bgnn.h"
#include "bgtest.h"
#include "loaders.h"

#include <sys/stat.h>

static void *output_of(bgnn_session *s, int i, size_t *bytes) {
    bgnn_tensor_info info = {.struct_size = sizeof info};
    if (bgnn_session_output_info(s, i, &info) != BGNN_OK) return NULL;
    void *v = malloc(info.bytes + 1);
    if (bgnn_session_read_output(s, i, v, info.bytes) != BGNN_OK) {
        free(v);
        return NULL;
    }
    *bytes = info.bytes;
    return v;
}

/* A session of m over graph (CSR; graph_ptr may be NULL) with k requests of features x [k n][f]. */
static bgnn_session *session(bgnn_model *m, const BgGraph *g, bool with_gptr, const float *x, int64_t k, int64_t f,
                             const char *weights) {
    bgnn_session *s;
    if (bgnn_session_create(m, &s) != BGNN_OK) return NULL;
    bool ok = bgnn_session_set_graph_csr(s, g->n, g->rowptr, g->col, with_gptr ? g->ngraphs : 0,
                                         with_gptr ? g->graph_ptr : NULL) == BGNN_OK &&
              bgnn_session_set_features(s, x, k * g->n, f) == BGNN_OK &&
              bgnn_session_set_weights(s, weights) == BGNN_OK && bgnn_session_set_requests(s, k) == BGNN_OK &&
              bgnn_session_run(s, NULL) == BGNN_OK;
    if (!ok) {
        bgnn_session_destroy(s);
        return NULL;
    }
    return s;
}

/* Every output of a k-request run against k single runs of its feature sets. */
static void check_requests(bgnn_model *m, const BgGraph *g, bool with_gptr, const float *x, int64_t k, int64_t f,
                           const char *weights, const char *what) {
    bgnn_session *all = session(m, g, with_gptr, x, k, f, weights);
    CHECK(all != NULL);
    if (!all) return;
    bgnn_model_info mi = {.struct_size = sizeof mi};
    CHECK_EQ_INT(bgnn_model_get_info(m, &mi), BGNN_OK);
    int64_t bad = 0;
    for (int64_t r = 0; r < k; r++) {
        bgnn_session *one = session(m, g, with_gptr, x + r * g->n * f, 1, f, weights);
        CHECK(one != NULL);
        if (!one) continue;
        for (int i = 0; i < mi.noutputs; i++) {
            size_t na = 0, n1 = 0;
            unsigned char *a = output_of(all, i, &na), *o = output_of(one, i, &n1);
            CHECK(a && o && na == (size_t)k * n1);
            if (a && o && na == (size_t)k * n1) bad += memcmp(a + (size_t)r * n1, o, n1) != 0;
            free(a);
            free(o);
        }
        bgnn_session_destroy(one);
    }
    printf("%s: %lld requests, %d outputs each, %lld differ from the single runs\n", what, (long long)k,
           mi.noutputs, (long long)bad);
    CHECK(bad == 0);
    bgnn_session_destroy(all);
}

/* k feature sets: the first as loaded, the others perturbed deterministically. */
static float *feature_sets(const BgTensor *t, int64_t k) {
    const size_t per = (size_t)(t->dim[0] * t->dim[1]);
    float *x = malloc(sizeof(float) * per * (size_t)k);
    unsigned long long s = 7;
    for (int64_t r = 0; r < k; r++)
        for (size_t q = 0; q < per; q++) {
            float v = ((const float *)t->data)[q];
            x[(size_t)r * per + q] = r == 0 ? v : v != 0.0f ? v * (1.0f + (float)r * 0.25f) : bg_test_rand(&s) % 61 == 0 ? 1.0f : 0.0f;
        }
    return x;
}

int main(void) {
    /* the copies: a batch of two graphs (0-1, 2) twice */
    {
        int64_t rp[4] = {0, 1, 2, 2}, gp[3] = {0, 2, 3};
        int32_t col[2] = {1, 0};
        BgGraph g = {3, 2, rp, col, 2, gp}, r;
        BgDiagSink d;
        bg_diag_init(&d);
        CHECK(bg_graph_replicate(&g, 2, &r, &d));
        int64_t erp[7] = {0, 1, 2, 2, 3, 4, 4}, egp[5] = {0, 2, 3, 5, 6};
        int32_t ecol[4] = {1, 0, 4, 3};
        CHECK(r.n == 6 && r.nnz == 4 && r.ngraphs == 4 && r.graph_ptr);
        CHECK(memcmp(r.rowptr, erp, sizeof erp) == 0 && memcmp(r.col, ecol, sizeof ecol) == 0 &&
              r.graph_ptr && memcmp(r.graph_ptr, egp, sizeof egp) == 0);
        bg_graph_free(&r);
        g.graph_ptr = NULL; /* one graph: its copies become a batch */
        g.ngraphs = 1;
        CHECK(bg_graph_replicate(&g, 3, &r, &d));
        int64_t e1[4] = {0, 3, 6, 9};
        CHECK(r.ngraphs == 3 && r.graph_ptr && memcmp(r.graph_ptr, e1, sizeof e1) == 0);
        bg_graph_free(&r);
        CHECK(!bg_graph_replicate(&g, 0, &r, &d));
        CHECK(!bg_graph_replicate(&g, (int64_t)1 << 31, &r, &d));
        bg_diag_free(&d);
    }

    const char *src = getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".";
    char model[700], weights[700], cora[700], tmodel[700], tweights[700], mutag[700];
    snprintf(model, sizeof model, "%s/examples/gcn_bin.bgnn", src);
    snprintf(weights, sizeof weights, "%s/examples/weights/gcn_bin_cora.safetensors", src);
    snprintf(tmodel, sizeof tmodel, "%s/examples/tu/gcn_bin_mutag.bgnn", src);
    snprintf(tweights, sizeof tweights, "%s/examples/weights/tu/gcn_bin_mutag.safetensors", src);
    snprintf(cora, sizeof cora, "%s/cora", bg_default_data_root());
    snprintf(mutag, sizeof mutag, "%s/mutag", bg_default_data_root());
    struct stat sb;
    if (stat(cora, &sb) != 0 || stat(mutag, &sb) != 0) bg_test_skip("no Cora or MUTAG under $BGNN_DATA_DIR");

    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = BGNN_TARGET_CPU;
    bgnn_context *c;
    CHECK_EQ_INT(bgnn_context_create(&o, &c), BGNN_OK);
    BgDiagSink d;
    bg_diag_init(&d);

    /* Cora, node outputs */
    bgnn_model *m;
    CHECK_EQ_INT(bgnn_model_compile_file(c, model, &m), BGNN_OK);
    BgDataset ds;
    CHECK(bg_dataset_load(cora, &ds, &d));
    const int64_t f = ds.features.dim[1];
    float *x = feature_sets(&ds.features, 3);
    check_requests(m, &ds.graph, false, x, 3, f, weights, "gcn_bin, Cora");

    /* accuracy of the first request; errors; back to one request */
    bgnn_session *s;
    CHECK_EQ_INT(bgnn_session_create(m, &s), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_load_data(s, cora), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_weights(s, weights), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_requests(s, 0), BGNN_ERR_INVALID_ARG);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "bgnn_session_set_requests: 0 requests");
    CHECK_EQ_INT(bgnn_session_set_requests(s, 2), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_prepare(s), BGNN_ERR_DATA); /* features of one request only */
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "the features have 2708 rows; 2 requests over a graph of 2708 nodes need 5416");
    printf("one request's features for two: %s\n", bgnn_context_last_error(c));
    CHECK_EQ_INT(bgnn_session_set_features(s, x, 2 * ds.graph.n, f), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_run(s, NULL), BGNN_OK);
    double acc = 0;
    CHECK_EQ_INT(bgnn_session_accuracy(s, 0, "test", &acc), BGNN_OK);
    CHECK(fabs(acc - 81.30) < 1e-9);
    bgnn_tensor_info info = {.struct_size = sizeof info};
    CHECK_EQ_INT(bgnn_session_output_info(s, 0, &info), BGNN_OK);
    CHECK(info.dim[0] == 2 * ds.graph.n && info.dim[1] == 7);
    CHECK_EQ_INT(bgnn_session_set_requests(s, 1), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_features(s, x, ds.graph.n, f), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_run(s, NULL), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_output_info(s, 0, &info), BGNN_OK);
    CHECK(info.dim[0] == ds.graph.n);
    bgnn_session_destroy(s);
    free(x);
    bg_dataset_free(&ds);
    bgnn_model_destroy(m);

    /* MUTAG, graph outputs: the 188-graph batch, and its first graph alone without graph_ptr */
    CHECK_EQ_INT(bgnn_model_compile_file(c, tmodel, &m), BGNN_OK);
    CHECK(bg_dataset_load(mutag, &ds, &d));
    const int64_t tf = ds.features.dim[1];
    x = feature_sets(&ds.features, 2);
    check_requests(m, &ds.graph, true, x, 2, tf, tweights, "gcn_bin, MUTAG batch");
    CHECK(bg_dataset_select_graphs(&ds, 0, 1, &d));
    free(x);
    x = feature_sets(&ds.features, 3);
    check_requests(m, &ds.graph, false, x, 3, tf, tweights, "gcn_bin, one MUTAG graph without graph_ptr");
    free(x);
    bg_dataset_free(&ds);
    bgnn_model_destroy(m);

    bg_diag_free(&d);
    bgnn_context_destroy(c);
    return bg_test_finish();
}
