// Package logging builds the service's zap logger and adapts it to the
// Temporal SDK's logger interface, so SDK, workflow and activity logs are
// one structured stream carrying session id, iteration and activity.
package logging

import (
	"fmt"

	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New returns a production JSON logger at the given level ("debug", "info",
// "warn", "error").
func New(level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.Sampling = nil
	cfg.EncoderConfig.TimeKey = "ts"
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	return cfg.Build()
}

// Temporal adapts a zap logger to go.temporal.io/sdk/log.Logger.
func Temporal(z *zap.Logger) log.Logger { return &adapter{z.Sugar()} }

type adapter struct{ s *zap.SugaredLogger }

func (a *adapter) Debug(msg string, kv ...interface{}) { a.s.Debugw(msg, kv...) }
func (a *adapter) Info(msg string, kv ...interface{})  { a.s.Infow(msg, kv...) }
func (a *adapter) Warn(msg string, kv ...interface{})  { a.s.Warnw(msg, kv...) }
func (a *adapter) Error(msg string, kv ...interface{}) { a.s.Errorw(msg, kv...) }

// With implements log.WithLogger so log.With keeps fields structured.
func (a *adapter) With(kv ...interface{}) log.Logger { return &adapter{a.s.With(kv...)} }
