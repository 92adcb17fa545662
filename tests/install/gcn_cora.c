/* gcn_cora.c - an outside program using an installed bgnn (tests/install/run.sh builds it
 * with find_package(bgnn) and with pkg-config): gcn_bin on Cora on the CPU reference,
 * through the public API only; prints the test accuracy and exits 1 unless it is the
 * trained 81.30 %.
 *   gcn_cora MODEL.bgnn DATA_DIR WEIGHTS.safetensors */
#include <bgnn/bgnn.h>

#include <math.h>
#include <stdio.h>

#define TRY(call)                                                                       \
    do {                                                                                \
        bgnn_status st_ = (call);                                                       \
        if (st_ != BGNN_OK) {                                                           \
            fprintf(stderr, "%s: %s\n%s", #call, bgnn_status_string(st_),               \
                    bgnn_context_last_error(ctx));                                      \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: gcn_cora MODEL.bgnn DATA_DIR WEIGHTS.safetensors\n");
        return 2;
    }
    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = BGNN_TARGET_CPU;
    bgnn_context *ctx = NULL;
    TRY(bgnn_context_create(&o, &ctx));
    bgnn_model *m;
    bgnn_session *s;
    double acc;
    TRY(bgnn_model_compile_file(ctx, argv[1], &m));
    TRY(bgnn_session_create(m, &s));
    TRY(bgnn_session_load_data(s, argv[2]));
    TRY(bgnn_session_set_weights(s, argv[3]));
    TRY(bgnn_session_run(s, NULL));
    TRY(bgnn_session_accuracy(s, 0, "test", &acc));
    printf("bgnn %s (%s): test accuracy %.2f%%\n", bgnn_version(), bgnn_context_device_name(ctx), acc);
    bgnn_session_destroy(s);
    bgnn_model_destroy(m);
    bgnn_context_destroy(ctx);
    return fabs(acc - 81.30) < 0.005 ? 0 : 1;
}
