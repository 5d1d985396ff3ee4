# The runtime's files for any Makefile that builds it (runtime_c/Makefile, the firmware examples):
#   include path/to/runtime_c/runtime.mk
# then compile $(FM_SRC) with $(FM_INC). Every .c under src/ and every folder of headers under
# include/ is found at any depth, so a new family folder (src/NAME/, include/NAME/) needs no edit.
# Sources include headers by bare name (#include "fm_nb.h"); FM_INC puts every header folder on
# the path, which also lets a flat copy of the files (an Arduino sketch folder) build unchanged.
# FM_HDR is what an object depends on: the public headers and then the private ones under src/ (the
# *_impl.h bodies a .c includes twice, fm_feat_internal.h), so editing a body alone rebuilds its objects;
# FM_INC is taken from the public headers only.
FM_RUNTIME ?= $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
FM_SRC := $(sort $(shell find $(FM_RUNTIME)/src -name '*.c'))
FM_HDR := $(sort $(shell find $(FM_RUNTIME)/include -name '*.h'))
FM_INC := $(addprefix -I,$(sort $(patsubst %/,%,$(dir $(FM_HDR)))))
FM_HDR += $(sort $(shell find $(FM_RUNTIME)/src -name '*.h'))
