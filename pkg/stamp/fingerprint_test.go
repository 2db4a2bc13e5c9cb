package stamp

import (
	"errors"
	"hash/fnv"
	"io"
	"testing"
)

// fpMessage is a little-endian Header-first message with stamp t, frame_id
// "imu" and the given payload.
func fpMessage(t Time, payload ...byte) []byte {
	m := []byte{0x00, 0x01, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 'i', 'm', 'u', 0}
	if err := SetHeaderStamp(m, t); err != nil {
		panic(err)
	}
	return append(m, payload...)
}

func TestFingerprint(t *testing.T) {
	msg := fpMessage(1_700_000_000_123_456_789, 1, 2, 3, 4, 5, 6, 7)
	fp, err := Fingerprint(msg)
	if err != nil {
		t.Fatal(err)
	}
	// FNV-1a of the representation identifier, the bytes after the stamp
	// and one byte of zero padding (27 bytes: the body is 23 long).
	h := fnv.New64a()
	h.Write(msg[:2])
	h.Write(msg[12:])
	h.Write([]byte{0})
	if want := h.Sum64(); fp != want {
		t.Fatalf("Fingerprint = %#x, want FNV-1a %#x", fp, want)
	}

	same := func(what string, m []byte) {
		t.Helper()
		got, err := Fingerprint(m)
		if err != nil || got != fp {
			t.Errorf("%s: fingerprint %#x, %v; want %#x", what, got, err, fp)
		}
	}
	restamped := append([]byte(nil), msg...)
	if err := SetHeaderStamp(restamped, 42); err != nil {
		t.Fatal(err)
	}
	same("another stamp", restamped)
	padded := append(append([]byte(nil), msg...), 0)
	padded[3] = 1 // the option bytes count the padding
	same("padded by the middleware", padded)

	for i := range msg {
		if i >= 2 && i < HeaderStampSize {
			continue // options and stamp
		}
		changed := append([]byte(nil), msg...)
		changed[i] ^= 0x20
		if got, err := Fingerprint(changed); err == nil && got == fp {
			t.Errorf("byte %d changed: same fingerprint", i)
		}
	}
	other, _ := Fingerprint(fpMessage(1_700_000_000_123_456_789, 1, 2, 3, 4, 5, 6, 8))
	if other == fp {
		t.Error("another payload: same fingerprint")
	}
}

func TestFingerprintBadInput(t *testing.T) {
	msg := fpMessage(5, 1, 2, 3)
	if _, err := Fingerprint(msg[:HeaderStampSize-1]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v, want ErrUnexpectedEOF", err)
	}
	bad := append([]byte(nil), msg...)
	bad[1] = 0x02 // parameter list encapsulation
	var ee *EncapsulationError
	if _, err := Fingerprint(bad); !errors.As(err, &ee) {
		t.Errorf("encapsulation 0x0002: %v, want *EncapsulationError", err)
	}
	if _, err := Fingerprint(msg[:HeaderStampSize]); err != nil {
		t.Errorf("a bare stamp: %v", err)
	}
}

func TestFingerprintZeroAlloc(t *testing.T) {
	msg := fpMessage(5, make([]byte, 300)...)
	if n := testing.AllocsPerRun(100, func() { _, _ = Fingerprint(msg) }); n != 0 {
		t.Errorf("Fingerprint allocates %v times", n)
	}
}
