/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps libdpm's copy of the nanopb runtime private: every global nanopb function is renamed
 * to dpm_pb_*, so an app that links its own nanopb (any 0.4.x) next to libdpm.a gets no
 * duplicate or mixed-up symbols.
 *
 * nanopb's own hook brings it in: the runtime (pb_*.c), the generated dpm.pb.c and every SDK
 * file that calls nanopb are compiled with -DPB_SYSTEM_HEADER="dpm_nanopb_rename.h", and pb.h
 * includes it before declaring anything. It must therefore also provide the system headers
 * pb.h would otherwise include. Types (pb_ostream_t, ...) are not link symbols and keep their
 * names. tests/unit/test_nanopb_private.sh fails if a global pb_ symbol appears in libdpm.a
 * (for example from a newer runtime adding a function this list lacks). */
#ifndef DPM_NANOPB_RENAME_H
#define DPM_NANOPB_RENAME_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The runtime's one configuration switch, set here so that the runtime and every file that
 * includes its headers agree on it: libdpm encodes into and decodes from memory buffers only
 * (pb_ostream_from_buffer, pb_istream_from_buffer, the sizing stream), never through a stream
 * callback, so nanopb reads and writes bytes directly instead of through a function pointer per
 * byte (a simulated device's report costs ~9% fewer instructions, dpm-sim bench). Field
 * callbacks (FedAUC's arrays, FT_CALLBACK) are unaffected. */
#define PB_BUFFER_ONLY 1
/* No error strings: nanopb would keep a message in every stream (stream.errmsg, PB_GET_ERROR)
 * that nothing in libdpm reads, as a decode or encode failure becomes the SDK's own status and
 * reason (e.g. "not a campaign message"). 791 bytes of the default Cortex-M4 image's flash
 * (make size: nanopb 3,895 -> 3,104), which issue 32's 120 KiB default+lean_tls budget needs. */
#define PB_NO_ERRMSG 1
/* With it, GCC 12 at -O2 and -O3 (not -Os, not clang) inlines pb_write into nanopb's
 * pb_encode.c so that its sizing call (buf NULL, never copied: the stream has no callback)
 * shares a memcpy with the writing ones, and -Wnonnull warns about a path that cannot run,
 * which -Werror builds (ours, ESP-IDF's) turn into an error. Silenced for the translation
 * units that include pb.h first, nanopb's runtime files (pb_encode.c, pb_decode.c), and only
 * there: every libdpm file reaches pb.h through another header (dpm.pb.h, pb_encode.h, ...). */
#if defined(__GNUC__) && !defined(__clang__) && __INCLUDE_LEVEL__ == 2
#pragma GCC diagnostic ignored "-Wnonnull"
#endif

/* pb_common.c */
#define pb_field_iter_begin dpm_pb_field_iter_begin
#define pb_field_iter_begin_extension dpm_pb_field_iter_begin_extension
#define pb_field_iter_next dpm_pb_field_iter_next
#define pb_field_iter_find dpm_pb_field_iter_find
#define pb_field_iter_find_extension dpm_pb_field_iter_find_extension
#define pb_field_iter_begin_const dpm_pb_field_iter_begin_const
#define pb_field_iter_begin_extension_const dpm_pb_field_iter_begin_extension_const
#define pb_default_field_callback dpm_pb_default_field_callback
#define pb_validate_utf8 dpm_pb_validate_utf8

/* pb_encode.c */
#define pb_ostream_from_buffer dpm_pb_ostream_from_buffer
#define pb_write dpm_pb_write
#define pb_encode dpm_pb_encode
#define pb_encode_ex dpm_pb_encode_ex
#define pb_get_encoded_size dpm_pb_get_encoded_size
#define pb_encode_varint dpm_pb_encode_varint
#define pb_encode_svarint dpm_pb_encode_svarint
#define pb_encode_string dpm_pb_encode_string
#define pb_encode_fixed32 dpm_pb_encode_fixed32
#define pb_encode_fixed64 dpm_pb_encode_fixed64
#define pb_encode_float_as_double dpm_pb_encode_float_as_double
#define pb_encode_submessage dpm_pb_encode_submessage
#define pb_encode_tag dpm_pb_encode_tag
#define pb_encode_tag_for_field dpm_pb_encode_tag_for_field

/* pb_decode.c */
#define pb_istream_from_buffer dpm_pb_istream_from_buffer
#define pb_read dpm_pb_read
#define pb_decode dpm_pb_decode
#define pb_decode_ex dpm_pb_decode_ex
#define pb_release dpm_pb_release
#define pb_decode_tag dpm_pb_decode_tag
#define pb_skip_field dpm_pb_skip_field
#define pb_decode_varint dpm_pb_decode_varint
#define pb_decode_varint32 dpm_pb_decode_varint32
#define pb_decode_bool dpm_pb_decode_bool
#define pb_decode_svarint dpm_pb_decode_svarint
#define pb_decode_fixed32 dpm_pb_decode_fixed32
#define pb_decode_fixed64 dpm_pb_decode_fixed64
#define pb_decode_double_as_float dpm_pb_decode_double_as_float
#define pb_make_string_substream dpm_pb_make_string_substream
#define pb_close_string_substream dpm_pb_close_string_substream

#endif /* DPM_NANOPB_RENAME_H */
