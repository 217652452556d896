package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/nicdiag/nicdiag/internal/testpki"
)

// The example web configuration loads as nicdiag_exporter loads it, next
// to a certificate, key and CA of those names: as shipped (TLS), and with
// its commented client-certificate and basic-auth lines put in force (the
// placeholder hash replaced by a real one).
func TestWebConfigExample(t *testing.T) {
	b, err := os.ReadFile("web-config.yml")
	if err != nil {
		t.Fatal(err)
	}
	p := testpki.New(t)
	conf := t.TempDir()
	for name, src := range map[string]string{"server.crt": p.CertFile, "server.key": p.KeyFile, "ca.crt": p.CAFile} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(conf, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("example"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	uncommented := strings.NewReplacer(
		"  # client_auth_type:", "  client_auth_type:", "  # client_ca_file:", "  client_ca_file:",
		"# basic_auth_users:", "basic_auth_users:", "#   prometheus: $2y$10$...", "  prometheus: "+string(hash),
	).Replace(string(b))
	if uncommented == string(b) || strings.Count(uncommented, "\n#") == strings.Count(string(b), "\n#") {
		t.Fatal("the example's commented lines have changed: update this test")
	}
	for name, text := range map[string]string{"as shipped": string(b), "uncommented": uncommented} {
		path := filepath.Join(conf, "web.yml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := web.Validate(path); err != nil {
			t.Errorf("%s: %v\n%s", name, err, text)
		}
	}
}
