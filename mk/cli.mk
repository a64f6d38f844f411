# Unit tests of the minlsh command's own files (programs/). Such a test is
# tests/test_<name>.c like the library's tests, and lists here the command
# sources it links besides the library.

TEST_PROG_SRC_test_json := programs/json.c programs/utf8.c programs/util.c \
  programs/progress.c

$(BUILD)/tests/test_json: tests/test_json.c tests/testlib.h programs/cli.h \
  $(TEST_PROG_SRC_test_json) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< $(TEST_PROG_SRC_test_json) -o $@ $(STATIC_LIB) $(LDFLAGS) -lm

TEST_PROG_SRC_test_names := programs/names.c programs/util.c programs/progress.c \
  programs/utf8.c

$(BUILD)/tests/test_names: tests/test_names.c tests/testlib.h programs/cli.h \
  $(TEST_PROG_SRC_test_names) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< $(TEST_PROG_SRC_test_names) -o $@ $(STATIC_LIB) $(LDFLAGS) -lm
