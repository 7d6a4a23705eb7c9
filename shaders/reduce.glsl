// Workgroup-wide max and sum of one float per invocation (64 invocations).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
shared float reduce_scratch[64];

float workgroup_max(float v) {
    v = subgroupMax(v);
    if (subgroupElect()) reduce_scratch[gl_SubgroupID] = v;
    barrier();
    float r = reduce_scratch[0];
    for (uint i = 1; i < gl_NumSubgroups; ++i) r = max(r, reduce_scratch[i]);
    barrier();
    return r;
}

float workgroup_sum(float v) {
    v = subgroupAdd(v);
    if (subgroupElect()) reduce_scratch[gl_SubgroupID] = v;
    barrier();
    float r = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) r += reduce_scratch[i];
    barrier();
    return r;
}
