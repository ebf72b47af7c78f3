package zktls

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Scheme is the ACL scheme of certificate ids (X509AuthenticationProvider).
const Scheme = "x509"

// PrincipalName is the id ZooKeeper's X509AuthenticationProvider gives a
// client certificate: cert.getSubjectX500Principal().getName(), the
// subject in RFC 2253 form as the JDK writes it: the RDNs last first,
// joined by ","; the attributes of a multi-valued RDN joined by "+" in
// their encoded order; the keywords CN, C, L, ST, O, OU, STREET, DC and
// UID, any other type as its dotted OID with the value as "#" and the hex
// of its DER encoding; string values with , = + < > # ; " \ escaped by a
// backslash, NUL as \00, and leading and trailing spaces escaped.
func PrincipalName(cert *x509.Certificate) (string, error) {
	return RDNName(cert.RawSubject)
}

type attributeTypeAndValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rdnSET is one RelativeDistinguishedName; encoding/asn1 reads a type
// whose name ends in SET as a SET OF.
type rdnSET []attributeTypeAndValue

// RDNName formats a DER-encoded Name (an RDNSequence) as PrincipalName
// does.
func RDNName(der []byte) (string, error) {
	var seq []rdnSET
	rest, err := asn1.Unmarshal(der, &seq)
	if err != nil {
		return "", fmt.Errorf("subject: %w", err)
	}
	if len(rest) > 0 {
		return "", fmt.Errorf("subject: trailing data")
	}
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if i != len(seq)-1 {
			b.WriteByte(',')
		}
		for j, atv := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAVA(&b, atv)
		}
	}
	return b.String(), nil
}

// rfc2253Keywords are the JDK's AVAKeyword entries marked RFC 2253
// compliant.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// derStringTags are the tags AVA.isDerString(value, false) accepts.
var derStringTags = map[int]bool{
	asn1.TagPrintableString: true,
	asn1.TagT61String:       true,
	asn1.TagIA5String:       true,
	asn1.TagGeneralString:   true,
	asn1.TagBMPString:       true,
	asn1.TagUTF8String:      true,
}

func writeAVA(b *strings.Builder, atv attributeTypeAndValue) {
	oid := atv.Type.String()
	kw, known := rfc2253Keywords[oid]
	if !known {
		kw = oid
	}
	b.WriteString(kw)
	b.WriteByte('=')
	v := atv.Value
	if !known || v.Class != asn1.ClassUniversal || !derStringTags[v.Tag] {
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(v.FullBytes))
		return
	}
	// The JDK decodes every string type's bytes as UTF-8.
	s := strings.ToValidUTF8(string(v.Bytes), string(utf8.RuneError))
	const escapees = ",=+<>#;\"\\"
	var esc strings.Builder
	for _, r := range s {
		switch {
		case strings.ContainsRune(escapees, r):
			esc.WriteByte('\\')
			esc.WriteRune(r)
		case r == 0:
			esc.WriteString(`\00`)
		default:
			esc.WriteRune(r)
		}
	}
	e := esc.String()
	lead := 0
	for lead < len(e) && (e[lead] == ' ' || e[lead] == '\r') {
		lead++
	}
	trail := len(e) - 1
	for trail >= 0 && (e[trail] == ' ' || e[trail] == '\r') {
		trail--
	}
	for i := 0; i < len(e); i++ {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteByte(e[i])
	}
}
