/* test_api_inputs.c - the public API's other ways in (CPU target): a graph as COO entries
 * (bgnn_session_set_graph_coo) or from any graph file (bgnn_session_set_graph_file), weights
 * from memory (bgnn_session_set_weights_tensor, as the Python package passes a state_dict),
 * bgnn_session_clear_weights, and bgnn_session_input_device_ptr refused on the CPU.  gcn_bin
 * on Cora must reach the trained test accuracy (81.30 %) with in-memory weights, and the COO
 * and file graphs must give logits identical to the data directory's; every bad argument
 * gets a status and a message naming what is wrong. */
#include "reference.h"
#include "bgnn/bgnn.h"
#include "bgtest.h"

#include <sys/stat.h>

static char model[700], weights[700], cora[700];

static bgnn_status set_tensors(bgnn_session *s, const BgSafetensors *st) {
    for (int i = 0; i < st->n; i++) {
        bgnn_status r = bgnn_session_set_weights_tensor(s, st->t[i].name, BGNN_F32, st->t[i].rank, st->t[i].dim,
                                                        st->t[i].data);
        if (r != BGNN_OK) return r;
    }
    return BGNN_OK;
}

static float *logits_of(bgnn_session *s, size_t *bytes) {
    bgnn_tensor_info info = {.struct_size = sizeof info};
    if (bgnn_session_output_info(s, 0, &info) != BGNN_OK) return NULL;
    float *v = malloc(info.bytes);
    if (bgnn_session_read_output(s, 0, v, info.bytes) != BGNN_OK) {
        free(v);
        return NULL;
    }
    *bytes = info.bytes;
    return v;
}

int main(void) {
    const char *src = getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".";
    snprintf(model, sizeof model, "%s/examples/gcn_bin.bgnn", src);
    snprintf(weights, sizeof weights, "%s/examples/weights/gcn_bin_cora.safetensors", src);
    snprintf(cora, sizeof cora, "%s/cora", bg_default_data_root());
    struct stat sb;
    if (stat(cora, &sb) != 0) bg_test_skip("no Cora under $BGNN_DATA_DIR");

    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = BGNN_TARGET_CPU;
    bgnn_context *c;
    CHECK_EQ_INT(bgnn_context_create(&o, &c), BGNN_OK);
    bgnn_model *m;
    CHECK_EQ_INT(bgnn_model_compile_file(c, model, &m), BGNN_OK);
    BgDiagSink d;
    bg_diag_init(&d);
    BgSafetensors st;
    CHECK(bg_safetensors_load(weights, &st, &d));

    /* A: the data directory, weights from memory */
    bgnn_session *a;
    CHECK_EQ_INT(bgnn_session_create(m, &a), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_load_data(a, cora), BGNN_OK);
    CHECK_EQ_INT(set_tensors(a, &st), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_weights_tensor(a, "conv2.bias", BGNN_F32, 1, st.t[0].dim, st.t[0].data),
                 BGNN_OK); /* replaced again below: the last one counts */
    const BgStTensor *b2 = bg_safetensors_find(&st, "conv2.bias");
    CHECK_EQ_INT(bgnn_session_set_weights_tensor(a, "conv2.bias", BGNN_F32, 1, b2->dim, b2->data), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_run(a, NULL), BGNN_OK);
    double acc = 0;
    CHECK_EQ_INT(bgnn_session_accuracy(a, 0, "test", &acc), BGNN_OK);
    CHECK(fabs(acc - 81.30) < 1e-9);
    printf("gcn_bin on Cora, weights from memory: test %.2f%%\n", acc);
    size_t na = 0, nb = 0;
    float *la = logits_of(a, &na);
    uint64_t dp;
    CHECK_EQ_INT(bgnn_session_input_device_ptr(a, &dp), BGNN_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "host on the CPU target");

    /* B: COO entries + features, the same tensors */
    BgDataset ds;
    CHECK(bg_dataset_load(cora, &ds, &d));
    int64_t *row = malloc(sizeof(int64_t) * (size_t)ds.graph.nnz), *col = malloc(sizeof(int64_t) * (size_t)ds.graph.nnz);
    for (int64_t i = 0; i < ds.graph.n; i++)
        for (int64_t k = ds.graph.rowptr[i]; k < ds.graph.rowptr[i + 1]; k++) {
            row[k] = i;
            col[k] = ds.graph.col[k];
        }
    bgnn_session *b;
    CHECK_EQ_INT(bgnn_session_create(m, &b), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_graph_coo(b, ds.graph.n, ds.graph.nnz, row, col, 0, NULL), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_features(b, ds.features.data, ds.features.dim[0], ds.features.dim[1]), BGNN_OK);
    CHECK_EQ_INT(set_tensors(b, &st), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_run(b, NULL), BGNN_OK);
    float *lb = logits_of(b, &nb);
    CHECK(la && lb && na == nb && memcmp(la, lb, na) == 0);
    free(lb);

    /* C: the graph from a file, weights from the file */
    char gpath[800];
    snprintf(gpath, sizeof gpath, "%s/graph.mtx", cora);
    CHECK_EQ_INT(bgnn_session_set_graph_file(b, gpath), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_weights(b, weights), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_run(b, NULL), BGNN_OK);
    lb = logits_of(b, &nb);
    CHECK(la && lb && na == nb && memcmp(la, lb, na) == 0);
    free(lb);

    /* errors */
    row[5] = ds.graph.n;
    CHECK_EQ_INT(bgnn_session_set_graph_coo(b, ds.graph.n, ds.graph.nnz, row, col, 0, NULL), BGNN_ERR_DATA);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "graph COO: entry 5: (row 2708, col");
    CHECK_EQ_INT(bgnn_session_set_graph_coo(b, 3, 1, NULL, col, 0, NULL), BGNN_ERR_INVALID_ARG);
    int64_t r1[1] = {0}, c1[1] = {1}, gp[3] = {0, 2, 1};
    CHECK_EQ_INT(bgnn_session_set_graph_coo(b, 3, 1, r1, c1, 2, gp), BGNN_ERR_DATA);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "graph_ptr");
    CHECK_EQ_INT(bgnn_session_set_graph_file(b, "/nonexistent/graph.txt"), BGNN_ERR_IO);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "/nonexistent/graph.txt: cannot open");
    int64_t sh[2] = {64, 7};
    float zero[448] = {0};
    CHECK_EQ_INT(bgnn_session_set_weights_tensor(b, "x", BGNN_B1, 2, sh, zero), BGNN_ERR_UNSUPPORTED);
    CHECK_EQ_INT(bgnn_session_set_weights_tensor(b, "", BGNN_F32, 2, sh, zero), BGNN_ERR_INVALID_ARG);
    CHECK_EQ_INT(bgnn_session_set_weights_tensor(b, "x", BGNN_F32, 5, sh, zero), BGNN_ERR_INVALID_ARG);
    CHECK_EQ_INT(bgnn_session_set_weights_tensor(b, "x", BGNN_F32, 2, sh, NULL), BGNN_ERR_INVALID_ARG);
    /* a wrong shape in memory is reported like a file's, naming the in-memory source */
    CHECK_EQ_INT(bgnn_session_set_graph_file(b, gpath), BGNN_OK);
    CHECK_EQ_INT(set_tensors(b, &st), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_weights_tensor(b, "conv2.weight", BGNN_F32, 2, sh, zero), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_prepare(b), BGNN_ERR_DATA);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c),
                       "(in-memory weights): tensor 'conv2.weight' has shape [64, 7], but parameter 'conv2.weight'");
    /* set_weights(path) drops the tensors; clear_weights drops everything */
    CHECK_EQ_INT(bgnn_session_set_weights(b, weights), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_prepare(b), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_clear_weights(b), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_prepare(b), BGNN_ERR_DATA);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "no weights file given");
    CHECK_EQ_INT(bgnn_session_set_weights_tensor(b, "bn.running_mean", BGNN_F32, 0, NULL, zero), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_prepare(b), BGNN_ERR_DATA);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "(in-memory weights): no tensor named");
    CHECK_EQ_INT(bgnn_session_set_graph_coo(NULL, 0, 0, NULL, NULL, 0, NULL), BGNN_ERR_INVALID_ARG);
    CHECK_EQ_INT(bgnn_session_clear_weights(NULL), BGNN_ERR_INVALID_ARG);

    free(la);
    free(row);
    free(col);
    bg_dataset_free(&ds);
    bg_safetensors_free(&st);
    bg_diag_free(&d);
    bgnn_session_destroy(a);
    bgnn_session_destroy(b);
    bgnn_model_destroy(m);
    bgnn_context_destroy(c);
    return bg_test_finish();
}
