package contract

import "github.com/lethe-research/lethe/config"

// The parameter tree a session runs with, recorded in its history. The
// types live in config (with the parameter table, defaults and validation,
// all pure); these aliases let workflow code name them through contract.
type (
	Config    = config.Config
	Control   = config.Control
	Telemetry = config.Telemetry
	Session   = config.Session
	Budget    = config.Budget
	Thinking  = config.Thinking
	LLM       = config.LLM
	Embed     = config.Embed
	Algebra   = config.Algebra
	Context   = config.Context
	Research  = config.Research
	Assembly  = config.Assembly
	DIN       = config.DIN
	Graph     = config.Graph
	Temporal  = config.Temporal
)

// Defaults is the tree of defaults (config.Defaults): pure, no files, no
// environment.
func Defaults() Config { return config.Defaults() }
