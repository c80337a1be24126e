package neo4j

import (
	"errors"
	"strings"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// transientClientCodes are the ClientErrors that a retry can cure: a
// cluster member that stopped leading, a read-only follower written to
// during a leader switch, and credentials that expired and are renewed on
// the next connection (the driver retries these three too).
var transientClientCodes = map[string]bool{
	"Neo.ClientError.Cluster.NotALeader":                  true,
	"Neo.ClientError.General.ForbiddenOnReadOnlyDatabase": true,
	"Neo.ClientError.Security.AuthorizationExpired":       true,
}

// Permanent reports whether err is a Neo4j server error that the same
// request meets again, by its class: Neo.ClientError.* (a bad statement,
// a constraint, a missing database, a refused credential) except
// transientClientCodes. Neo.TransientError.* (deadlocks, memory, an
// unavailable database) and the server's own Neo.DatabaseError.* are
// retried, and so is anything that is not a server error (connectivity).
// A permanent error retried as transient costs the activity's whole retry
// schedule and hides its cause behind the last attempt.
func Permanent(err error) bool {
	var ne *driver.Neo4jError
	if !errors.As(err, &ne) {
		return false
	}
	return strings.HasPrefix(ne.Code, "Neo.ClientError.") && !transientClientCodes[ne.Code]
}
