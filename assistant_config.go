package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/llm"
	"github.com/spf13/viper"
)

// configureAssistant connects the assistant to the language model of the
// config's assistant.model section, if one is configured. Without a base
// URL the assistant answers offline and makes no outbound connection.
func configureAssistant(v *viper.Viper, a *app.App, log *slog.Logger) error {
	base := strings.TrimSpace(v.GetString("assistant.model.base_url"))
	if base == "" {
		return nil
	}
	c, err := llm.New(llm.Config{BaseURL: base, Model: v.GetString("assistant.model.name"), APIKey: v.GetString("assistant.model.api_key"),
		NoStream: !v.GetBool("assistant.model.stream")}, a.NetworkPolicy())
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	timeout := v.GetDuration("assistant.model.timeout")
	if timeout < 0 {
		return fmt.Errorf("config: assistant.model.timeout must not be negative")
	}
	maxTokens := v.GetInt("assistant.model.max_tokens")
	if maxTokens < 0 {
		return fmt.Errorf("config: assistant.model.max_tokens must not be negative")
	}
	a.SetAssistantModel(c, maxTokens, timeout)
	log.Info("assistant model configured", slog.String("model", v.GetString("assistant.model.name")), slog.String("base_url", base))
	return nil
}
