//! The stand-in against what mail-parser expects of encoding_rs: its own test
//! vectors for every encoding it names, and encoding_rs's BOM sniffing, its
//! `replacement` encoding and its streaming, judged against encoding_rs 0.7's
//! `Encoding::decode`, which sniffs for itself.

use super::*;

fn decoded(encoding: &'static Encoding, bytes: &[u8]) -> String {
    let mut text = String::new();
    let (result, read, _) = encoding.new_decoder().decode_to_string(bytes, &mut text, true);
    assert_eq!((result, read), (CoderResult::InputEmpty, bytes.len()));
    text
}

#[test]
fn every_encoding_mail_parser_names_decodes_its_own_test_vector() {
    let check = |encoding, bytes: &[u8], expected: &str| assert_eq!(decoded(encoding, bytes), expected, "{encoding:?}");
    check(SHIFT_JIS, b"\x83n\x83\x8D\x81[\x81E\x83\x8F\x81[\x83\x8B\x83h", "ハロー・ワールド");
    check(BIG5, b"\xa7A\xa6n\xa1A\xa5@\xac\xc9", "你好，世界");
    check(EUC_JP, b"\xa5\xcf\xa5\xed\xa1\xbc\xa1\xa6\xa5\xef\xa1\xbc\xa5\xeb\xa5\xc9", "ハロー・ワールド");
    check(EUC_KR, b"\xbe\xc8\xb3\xe7\xc7\xcf\xbc\xbc\xbf\xe4 \xbc\xbc\xb0\xe8", "안녕하세요 세계");
    check(ISO_2022_JP, b"\x1b$B%O%m!<!&%o!<%k%I\x1b(B", "ハロー・ワールド");
    check(GBK, b"\xc4\xe3\xba\xc3\xa3\xac\xca\xc0\xbd\xe7", "你好，世界");
    check(GB18030, b"\xc4\xe3\xba\xc3\xa3\xac\xca\xc0\xbd\xe7", "你好，世界");
    check(X_MAC_CYRILLIC, b"\x8f\xf0\xe8\xe2\xe5\xf2", "Привет");
    check(X_USER_DEFINED, b"\x80\xff", "\u{f780}\u{f7ff}");
    check(IBM866, b"\x8f\xe0\xa8\xa2\xa5\xe2", "Привет");
    check(WINDOWS_874, b"\xca\xc7\xd1\xca\xb4\xd5", "สวัสดี");
    check(REPLACEMENT, b"\x1b$)Cabcd", "\u{fffd}");
}

#[test]
fn byte_order_marks_malformed_bytes_and_the_replacement_encoding_decode_as_encoding_rs_decodes_them() {
    let inputs: &[&[u8]] = &[
        b"",
        b"plain ascii",
        b"\xEF\xBB\xBFutf-8 after its mark \xE6\x97\xA5",
        b"\xEF\xBB\xBF\xEF\xBB\xBFtwo marks, the second kept",
        b"\xEF\xBBnot quite a mark",
        b"\xFF\xFEa\x00b\x00",
        b"\xFE\xFF\x00a\x00b",
        b"\xFF\xFEa",
        b"ab\x83",
        b"\x1b$B%O",
        b"\xbe\xff\xbe",
        b"\x80\xff\x84\x30",
    ];
    let encodings = [
        (BIG5, legacy_encoding::BIG5),
        (EUC_JP, legacy_encoding::EUC_JP),
        (EUC_KR, legacy_encoding::EUC_KR),
        (GB18030, legacy_encoding::GB18030),
        (GBK, legacy_encoding::GBK),
        (IBM866, legacy_encoding::IBM866),
        (ISO_2022_JP, legacy_encoding::ISO_2022_JP),
        (REPLACEMENT, legacy_encoding::REPLACEMENT),
        (SHIFT_JIS, legacy_encoding::SHIFT_JIS),
        (WINDOWS_874, legacy_encoding::WINDOWS_874),
        (X_MAC_CYRILLIC, legacy_encoding::X_MAC_CYRILLIC),
        (X_USER_DEFINED, legacy_encoding::X_USER_DEFINED),
    ];
    for (encoding, reference) in encodings {
        assert_eq!(encoding.name(), reference.name());
        for input in inputs {
            let (expected, _, _) = reference.decode(input);
            assert_eq!(decoded(encoding, input), expected, "{} of {input:?}", encoding.name());
        }
    }
}

#[test]
fn input_given_in_pieces_is_decoded_as_a_whole_once_the_last_piece_comes() {
    let bytes = b"\x1b$B%O%m!<!&%o!<%k%I\x1b(B";
    let mut decoder = ISO_2022_JP.new_decoder();
    let mut text = String::new();
    for piece in bytes[..bytes.len() - 1].chunks(3) {
        assert_eq!(decoder.decode_to_string(piece, &mut text, false), (CoderResult::InputEmpty, piece.len(), false));
    }
    let (result, read, replaced) = decoder.decode_to_string(&bytes[bytes.len() - 1..], &mut text, true);
    assert_eq!((result, read, replaced), (CoderResult::InputEmpty, 1, false));
    assert_eq!(text, "ハロー・ワールド");
}

#[test]
fn the_text_is_appended_beyond_the_capacity_given_and_malformed_bytes_are_reported() {
    let mut text = String::from("件名: ");
    let (result, _, replaced) = SHIFT_JIS.new_decoder().decode_to_string(b"\x83n\x83\x8D\x81[\x83", &mut text, true);
    assert_eq!((result, replaced), (CoderResult::InputEmpty, true));
    assert_eq!(text, "件名: ハロー\u{fffd}");
}
