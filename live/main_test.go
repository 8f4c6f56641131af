package live

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for brigade live in the kill -9
// campaign (campaign_test.go): run with campaignEnv set, it is a driver
// process the campaign kills.
func TestMain(m *testing.M) {
	if os.Getenv(campaignEnv) != "" {
		os.Exit(campaignChild())
	}
	os.Exit(m.Run())
}
