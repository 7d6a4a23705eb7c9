# Compiles shaders/*.comp with glslc, checks each with spirv-val and embeds the SPIR-V.
# A shader whose first line is "// variants: A B C" is compiled once per variant with
# -DVARIANT_A etc. and embedded as <name>_<a> (a variant "A+B" defines both, as <name>_<a>_<b>).
# One whose first line is "// keep-names" is compiled without optimisation, so its SPIR-V keeps
# the names tests/test_layouts.cpp reads.
file(GLOB SHADER_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/shaders/*.comp)
file(GLOB SHADER_INCLUDES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/shaders/*.glsl ${CMAKE_SOURCE_DIR}/shaders/layouts/*.h)
set(SPV_DIR ${CMAKE_BINARY_DIR}/spv)
file(MAKE_DIRECTORY ${SPV_DIR})
set(SPV_FILES)
set(SPV_NAMES)
foreach(src ${SHADER_SOURCES})
  get_filename_component(base ${src} NAME_WE)
  # The first line decides the variants: editing a shader re-runs this, so a new variant is built
  # and embedded by an incremental build too.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(STRINGS ${src} first_line LIMIT_COUNT 1)
  set(variants "")
  set(optimize -O)
  if(first_line MATCHES "^// keep-names")
    set(optimize -O0)
  endif()
  if(first_line MATCHES "^// variants: (.*)$")
    string(REPLACE " " ";" variants "${CMAKE_MATCH_1}")
  endif()
  if(variants STREQUAL "")
    set(variants "_")
  endif()
  foreach(v ${variants})
    if(v STREQUAL "_")
      set(name ${base})
      set(defs "")
    else()
      # "Q8_0+TEXEL": -DVARIANT_Q8_0 -DVARIANT_TEXEL, embedded as <name>_q8_0_texel.
      string(TOLOWER ${v} vl)
      string(REPLACE "+" "_" vl ${vl})
      set(name ${base}_${vl})
      string(REPLACE "+" ";" parts ${v})
      set(defs "")
      foreach(part ${parts})
        list(APPEND defs -DVARIANT_${part})
      endforeach()
    endif()
    set(out ${SPV_DIR}/${name}.spv)
    add_custom_command(OUTPUT ${out}
      COMMAND ${GLSLC} --target-env=vulkan1.2 ${optimize} ${defs} -I ${CMAKE_SOURCE_DIR}/shaders ${src} -o ${out}
      COMMAND ${SPIRV_VAL} --target-env vulkan1.2 ${out}
      DEPENDS ${src} ${SHADER_INCLUDES}
      COMMENT "glslc ${name}")
    list(APPEND SPV_FILES ${out})
    list(APPEND SPV_NAMES ${name})
  endforeach()
endforeach()
set(EMBEDDED_SHADERS_CPP ${CMAKE_BINARY_DIR}/embedded_shaders.cpp)
string(REPLACE ";" "," SPV_NAME_LIST "${SPV_NAMES}")
add_custom_command(OUTPUT ${EMBEDDED_SHADERS_CPP}
  COMMAND ${CMAKE_COMMAND} -DOUT=${EMBEDDED_SHADERS_CPP} -DSPV_DIR=${SPV_DIR} -DNAMES=${SPV_NAME_LIST}
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_spirv.cmake
  DEPENDS ${SPV_FILES} ${CMAKE_SOURCE_DIR}/cmake/embed_spirv.cmake
  COMMENT "embedding SPIR-V")
add_custom_target(medusa_shaders DEPENDS ${EMBEDDED_SHADERS_CPP})
