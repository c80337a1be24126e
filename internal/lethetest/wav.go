package lethetest

import (
	"bytes"
	"encoding/binary"
)

// SilentWAV is n samples of 16-bit mono PCM silence at rate Hz, as a WAV
// file: media for the transcription tests.
func SilentWAV(rate, n int) []byte {
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	data := 2 * n
	b.WriteString("RIFF")
	le(uint32(36 + data))
	b.WriteString("WAVEfmt ")
	le(uint32(16))       // fmt chunk size
	le(uint16(1))        // PCM
	le(uint16(1))        // mono
	le(uint32(rate))     // sample rate
	le(uint32(2 * rate)) // byte rate
	le(uint16(2))        // block align
	le(uint16(16))       // bits per sample
	b.WriteString("data")
	le(uint32(data))
	b.Write(make([]byte, data))
	return b.Bytes()
}
