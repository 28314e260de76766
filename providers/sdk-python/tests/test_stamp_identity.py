"""Unit tests of stamp_identity.py (plain Python, no bindings needed)."""

import unittest

from stamp_identity import SECTION, _sections, stamp

# The smallest component: the magic and the component layer's version.
EMPTY_COMPONENT = b"\0asm\x0d\0\x01\0"


def identity_sections(wasm):
    return [wasm[start:end] for start, end, _, name in _sections(wasm) if name == SECTION]


class StampIdentity(unittest.TestCase):
    def test_the_section_says_name_and_version(self):
        wasm = stamp(EMPTY_COMPONENT, "archive", "1.2.3")
        (section,) = identity_sections(wasm)
        self.assertTrue(section.endswith(b"name=archive\nversion=1.2.3\n"))
        self.assertEqual(wasm[:8], EMPTY_COMPONENT)

    def test_stamping_again_replaces_and_keeps_other_sections(self):
        other = b"\0\x06\x05other"  # a custom section named "other", empty
        wasm = stamp(stamp(EMPTY_COMPONENT + other, "a", "0.1.0"), "b", "0.2.0")
        self.assertEqual(len(identity_sections(wasm)), 1)
        self.assertIn(b"name=b\nversion=0.2.0\n", wasm)
        self.assertIn(other, wasm)

    def test_bad_input_is_refused(self):
        with self.assertRaisesRegex(ValueError, "not a provider name"):
            stamp(EMPTY_COMPONENT, "Bad Name", "1.0.0")
        with self.assertRaisesRegex(ValueError, "not a semantic version"):
            stamp(EMPTY_COMPONENT, "ok", "1.0")
        with self.assertRaisesRegex(ValueError, "not a WebAssembly file"):
            stamp(b"hello world", "ok", "1.0.0")
        with self.assertRaisesRegex(ValueError, "past the end"):
            stamp(EMPTY_COMPONENT + b"\x01\x10", "ok", "1.0.0")


if __name__ == "__main__":
    unittest.main()
