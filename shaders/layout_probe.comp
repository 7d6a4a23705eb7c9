// keep-names
#version 450
#include "layouts/block_params.h"
#include "layouts/kv_commit.h"
#include "layouts/eagle_inputs.h"
#include "layouts/medusa_gather_map.h"
#include "layouts/push_constants.h"
// Never dispatched: compiled without optimisation so its SPIR-V keeps member names and
// offsets, which tests/test_layouts.cpp compares with the C++ structs of the same headers.
// Push constants follow std430 like storage buffers, so one kind of block checks both.
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Probe0 { BlockParams v0; };
layout(std430, binding = 1) buffer Probe1 { KvCommit v1; };
layout(std430, binding = 2) buffer Probe2 { MedusaGatherMap v2; };
layout(std430, binding = 3) buffer Probe3 { DraftProbs v3; };
layout(std430, binding = 4) buffer Probe4 { MatmulPush v4; };
layout(std430, binding = 5) buffer Probe5 { EmbedPush v5; };
layout(std430, binding = 6) buffer Probe6 { RopePush v6; };
layout(std430, binding = 7) buffer Probe7 { AttentionPush v7; };
layout(std430, binding = 8) buffer Probe8 { RmsnormPush v8; };
layout(std430, binding = 9) buffer Probe9 { ArgmaxPush v9; };
layout(std430, binding = 10) buffer Probe10 { NodeStatsPush v10; };
layout(std430, binding = 11) buffer Probe11 { KvCompactPush v11; };
layout(std430, binding = 12) buffer Probe12 { RowPush v12; };
layout(std430, binding = 13) buffer Probe13 { TopkPush v13; };
layout(std430, binding = 14) buffer Probe14 { TrainMatmulPush v14; };
layout(std430, binding = 15) buffer Probe15 { TrainResblockPush v15; };
layout(std430, binding = 16) buffer Probe16 { TrainSoftmaxCePush v16; };
layout(std430, binding = 17) buffer Probe17 { TrainGradNormPush v17; };
layout(std430, binding = 18) buffer Probe18 { TrainAdamwPush v18; };
layout(std430, binding = 19) buffer Probe19 { TrainBiasPush v19; };
layout(std430, binding = 20) buffer Probe20 { TrainRmsnormPush v20; };
layout(std430, binding = 21) buffer Probe21 { TrainRopePush v21; };
layout(std430, binding = 22) buffer Probe22 { TrainAttentionPush v22; };
layout(std430, binding = 23) buffer Probe23 { TrainSwigluPush v23; };
layout(std430, binding = 24) buffer Probe24 { TrainSmoothL1Push v24; };
layout(std430, binding = 25) buffer Probe25 { TrainSoftCePush v25; };
layout(std430, binding = 26) buffer Probe26 { EagleInputs v26; };
layout(std430, binding = 27) buffer Probe27 { TrainAxpyPush v27; };
layout(std430, binding = 28) buffer Probe28 { TrainTttAttentionPush v28; };

void main() {
    float sum = 0.0;
    sum += float(v0.base);
    sum += float(v1.kept);
    sum += float(v2.nodes);
    sum += float(v3.prob[0]);
    sum += float(v4.in_dim);
    sum += float(v5.dim);
    sum += float(v6.dim);
    sum += float(v7.dim);
    sum += float(v8.dim);
    sum += float(v9.vocab);
    sum += float(v10.vocab);
    sum += float(v11.n_layers);
    sum += float(v12.dim);
    sum += float(v13.vocab);
    sum += float(v14.M);
    sum += float(v15.dim);
    sum += float(v16.vocab);
    sum += float(v17.n);
    sum += float(v18.n);
    sum += float(v19.rows);
    sum += float(v20.rows);
    sum += float(v21.rows);
    sum += float(v22.rows);
    sum += float(v23.rows);
    sum += float(v24.rows);
    sum += float(v25.vocab);
    sum += float(v26.store_base);
    sum += float(v27.n);
    sum += float(v28.step);
    v0.base = uint(sum);
}
