/*
 * test_utf8.c: well-formed UTF-8 (common/utf8.c): every length of
 * sequence is kept; overlong forms, surrogates, code points past
 * U+10FFFF, stray continuations and sequences cut short (by the end or by
 * another lead byte) each become U+FFFD, a byte at a time.
 */
#include "testutil.h"

#include "utf8.h"

static void sequences_are_measured(void **state)
{
	assert_int_equal(utf8_sequence((const unsigned char *)"a"), 1);
	assert_int_equal(utf8_sequence((const unsigned char *)"\xc3\xa9"), 2);          /* é */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xe2\x82\xac"), 3);      /* € */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xf0\x9f\x98\x80"), 4);  /* U+1F600 */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xf4\x8f\xbf\xbf"), 4);  /* U+10FFFF */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xc0\xaf"), 0);          /* overlong '/' */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xe0\x80\xaf"), 0);      /* overlong */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xed\xa0\x80"), 0);      /* a surrogate */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xf4\x90\x80\x80"), 0);  /* past U+10FFFF */
	assert_int_equal(utf8_sequence((const unsigned char *)"\x80"), 0);              /* a continuation */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xe2\x82"), 0);          /* cut by the end */
	assert_int_equal(utf8_sequence((const unsigned char *)"\xe2\x82\xe2\x82\xac"), 0);
}

static void invalid_bytes_become_replacement_characters(void **state)
{
	char *s = utf8_valid_copy("tr\xe9.db");
	assert_non_null(s);
	assert_string_equal(s, "tr\xef\xbf\xbd.db");
	free(s);
	s = utf8_valid_copy("caf\xc3\xa9 \xe2\x82 \xe2\x82\xac\xff");
	assert_string_equal(s, "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd \xe2\x82\xac\xef\xbf\xbd");
	free(s);
	s = utf8_valid_copy("");
	assert_string_equal(s, "");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sequences_are_measured),
		cmocka_unit_test(invalid_bytes_become_replacement_characters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
