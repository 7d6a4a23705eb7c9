// The gated FFN's activation of its gate row: SiLU (SwiGLU) or GELU's tanh approximation (GeGLU,
// Gemma's gelu_pytorch_tanh). tanh's argument is clamped: some drivers compute tanh from
// exponentials that overflow to inf / inf past |x| ~ 44, and tanh(15) is 1 in float already.
float gate_activation(float g, bool gelu) {
    if (gelu) {
        const float k = 0.7978845608028654;  // sqrt(2 / pi)
        return 0.5 * g * (1.0 + tanh(clamp(k * (g + 0.044715 * g * g * g), -15.0, 15.0)));
    }
    return g / (1.0 + exp(-g));
}
