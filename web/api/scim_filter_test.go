package api

import (
	"encoding/json"
	"testing"
)

// The filter examples of RFC 7644 section 3.4.2.2, against two users.
func TestSCIMFilterRFCExamples(t *testing.T) {
	t.Parallel()
	var bjensen, jsmith map[string]any
	if err := json.Unmarshal([]byte(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
	  "userName":"bjensen","name":{"familyName":"O'Malley","givenName":"Barbara"},"title":"Tour Guide","userType":"Employee",
	  "emails":[{"value":"bjensen@example.com","type":"work"},{"value":"babs@jensen.org","type":"home"}],
	  "ims":[{"value":"babs@foo.com","type":"xmpp"}],
	  "meta":{"lastModified":"2011-05-13T04:42:34Z"}}`), &bjensen); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],
	  "userName":"Jsmith","name":{"familyName":"Smith"},"userType":"Intern",
	  "emails":[{"value":"js@example.org","type":"home"}],
	  "meta":{"lastModified":"2010-01-01T00:00:00Z"}}`), &jsmith); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		filter string
		bj, js bool
	}{
		{`userName eq "bjensen"`, true, false},
		{`userName eq "BJENSEN"`, true, false},
		{`name.familyName co "O'Malley"`, true, false},
		{`userName sw "J"`, false, true},
		{`urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"`, false, true},
		{`title pr`, true, false},
		{`meta.lastModified gt "2011-05-13T04:42:34Z"`, false, false},
		{`meta.lastModified ge "2011-05-13T04:42:34Z"`, true, false},
		{`meta.lastModified lt "2011-05-13T04:42:34Z"`, false, true},
		{`meta.lastModified le "2011-05-13T04:42:34Z"`, true, true},
		{`title pr and userType eq "Employee"`, true, false},
		{`title pr or userType eq "Intern"`, true, true},
		{`schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`, true, false},
		{`userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")`, true, false},
		{`userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")`, false, false},
		{`userType eq "Employee" and (emails.type eq "work")`, true, false},
		{`userType eq "Employee" and emails[type eq "work" and value co "@example.com"]`, true, false},
		{`emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]`, true, false},
		{`emails[type eq "work"].value ew "@example.com"`, true, false},
		{`emails[type eq "home"].value ew "@example.org"`, false, true},
		{`emails.value ew ".org"`, true, true},
		{`not (userName eq "bjensen")`, false, true},
		{`userName ne "bjensen"`, false, true},
		{`title eq null`, false, true},
		{`(userType eq "Intern" or userType eq "Employee") and name.givenName sw "bar"`, true, false},
		{`userType eq "Intern" or userType eq "Employee" and title pr`, true, true},
	} {
		f, err := parseSCIMFilter(c.filter)
		if err != nil {
			t.Errorf("%s: %v", c.filter, err)
			continue
		}
		if got := f.match(bjensen); got != c.bj {
			t.Errorf("%s on bjensen: %v, want %v", c.filter, got, c.bj)
		}
		if got := f.match(jsmith); got != c.js {
			t.Errorf("%s on jsmith: %v, want %v", c.filter, got, c.js)
		}
	}
	for _, bad := range []string{``, `userName`, `userName eq`, `userName zz "x"`, `userName eq "x`, `(userName eq "x"`,
		`emails[type eq "work"`, `userName eq "x" and`, `a.b.c eq "x"`, `title co true`, `userName eq x`, `userName gt true`, `) or (`} {
		if _, err := parseSCIMFilter(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
