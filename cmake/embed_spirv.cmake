# Writes a C++ file with every SPIR-V module as a uint32 array and a table indexed by gpu::Shader
# (NAMES is in the enum's order), with the bindings each module's preprocessed source declares.
string(REPLACE "," ";" NAMES "${NAMES}")

# The bindings <name>.pp.comp declares in set 0: one past the highest, a mask of the uniform
# texel buffers among them (the others are storage buffers; anything else stops the build), and a
# mask of those the shader may write: storage buffers with a declaration not marked readonly.
function(declared_bindings name out_count out_texels out_written)
  file(READ ${SPV_DIR}/${name}.pp.comp source)
  if(source MATCHES "layout *\\(([^)]*[, ])?set *= *[1-9]")
    message(FATAL_ERROR "${name}: kernels bind descriptor set 0 only")
  endif()
  string(REGEX MATCHALL "layout *\\([^)]*binding *= *[0-9]+[^)]*\\)[^{;]*" decls "${source}")
  set(count 0)
  set(texels 0)
  set(written 0)
  foreach(decl ${decls})
    string(REGEX MATCH "binding *= *([0-9]+)" unused "${decl}")
    set(b ${CMAKE_MATCH_1})
    if(b GREATER_EQUAL 32)
      message(FATAL_ERROR "${name}: binding ${b} does not fit the 32-bit texel mask")
    endif()
    if(decl MATCHES "uniform +[iu]?samplerBuffer")
      math(EXPR texels "${texels} | (1 << ${b})")
    elseif(NOT decl MATCHES "buffer")
      message(FATAL_ERROR "${name}: '${decl}' is neither a storage buffer nor a uniform texel buffer")
    elseif(NOT decl MATCHES "readonly")
      math(EXPR written "${written} | (1 << ${b})")
    endif()
    if(b GREATER_EQUAL count)
      math(EXPR count "${b} + 1")
    endif()
  endforeach()
  set(${out_count} ${count} PARENT_SCOPE)
  set(${out_texels} ${texels} PARENT_SCOPE)
  set(${out_written} ${written} PARENT_SCOPE)
endfunction()

set(body "#include \"gpu/embedded_shaders.h\"\n\n#include <iterator>\n\nnamespace medusa::gpu {\nnamespace {\n")
set(table "")
foreach(name ${NAMES})
  file(READ ${SPV_DIR}/${name}.spv hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR words "${n} / 8")
  # SPIR-V is little-endian words: each four bytes become one word.
  string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])" "0x\\4\\3\\2\\1,"
         body_words "${hex}")
  string(APPEND body "constexpr uint32_t ${name}_spv[] = {${body_words}};\n")
  declared_bindings(${name} count texels written)
  string(APPEND table "    {Shader::${name}, \"${name}\", {${name}_spv, ${words}}, ${count}, ${texels}u, ${written}u},\n")
endforeach()
string(APPEND body "constexpr EmbeddedShader kShaders[] = {\n${table}};\n")
string(APPEND body "constexpr bool in_enum_order() {\n  for (size_t i = 0; i < std::size(kShaders); ++i)\n"
                   "    if (kShaders[i].shader != Shader(i)) return false;\n  return std::size(kShaders) == kShaderCount;\n}\n"
                   "static_assert(in_enum_order(), \"the table is indexed by gpu::Shader\");\n}  // namespace\n\n")
string(APPEND body "const EmbeddedShader& embedded_shader(Shader shader) { return kShaders[size_t(shader)]; }\n"
                   "}  // namespace medusa::gpu\n")
file(WRITE ${OUT} "${body}")
