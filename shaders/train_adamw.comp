#version 450
#include "layouts/push_constants.h"
// AdamW over the flat parameter buffer, with the gradient scaled down to the clipping norm.
// Step parameters: lr, 1-beta1^t, 1-beta2^t, beta1, beta2, eps, weight decay, clip norm.
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer P_ { float P[]; };
layout(std430, binding = 1) readonly buffer G_ { float G[]; };
layout(std430, binding = 2) buffer M_ { float Mo[]; };
layout(std430, binding = 3) buffer V_ { float Vo[]; };
layout(std430, binding = 4) readonly buffer Part_ { float part[]; };
layout(std430, binding = 5) readonly buffer SP_ { float SP[]; };
layout(push_constant) uniform PushBlock { TrainAdamwPush p; };
shared float red[256];
void main() {
    const uint t = gl_LocalInvocationID.x;
    float s = 0.0;
    for (uint i = t; i < p.n_parts; i += 256) s += part[i];
    red[t] = s;
    barrier();
    for (uint k = 128; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        barrier();
    }
    const float norm = sqrt(red[0]);
    const float clip = SP[7];
    const float gs = (clip > 0.0 && norm > clip) ? clip / norm : 1.0;
    const float lr = SP[0], bc1 = SP[1], bc2 = SP[2], b1 = SP[3], b2 = SP[4], eps = SP[5], wd = SP[6];
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += gl_NumWorkGroups.x * 256) {
        const float g = G[i] * gs;
        const float m = b1 * Mo[i] + (1.0 - b1) * g;
        const float v = b2 * Vo[i] + (1.0 - b2) * g * g;
        Mo[i] = m;
        Vo[i] = v;
        P[i] -= lr * ((m / bc1) / (sqrt(v / bc2) + eps) + wd * P[i]);
    }
}
