package embedded

import (
	"errors"

	berrors "go.etcd.io/bbolt/errors"
)

// permanentErrs are bbolt's errors that say the file itself is unusable (not
// a bbolt file, another format version, a page whose checksum does not
// match, a mapping that failed) or that the store is closed or read-only:
// every retry meets the same file. A timeout (the file lock) is not here:
// the other holder may let go.
var permanentErrs = []error{
	berrors.ErrInvalid, berrors.ErrVersionMismatch, berrors.ErrChecksum, berrors.ErrInvalidMapping,
	berrors.ErrDatabaseNotOpen, berrors.ErrDatabaseReadOnly, berrors.ErrTxNotWritable, berrors.ErrMaxSizeReached,
}

// Permanent reports whether err is a bbolt error retrying cannot cure.
func Permanent(err error) bool {
	for _, p := range permanentErrs {
		if errors.Is(err, p) {
			return true
		}
	}
	return false
}
