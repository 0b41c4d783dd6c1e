/** `gatehouse saml --help` (apart from cli.ts, which loads the SAML code: the CLI's start-up loads only this). */
export const SAML_USAGE = `Usage: gatehouse saml sp create --metadata-file FILE | --metadata-url URL [--name N]
           [--name-id-format email|persistent|persistent-shared|unspecified] [--allowed-groups a,b] [--json]
       gatehouse saml sp list [--json]
       gatehouse saml sp update --sp ID|ENTITYID [--metadata-file FILE | --metadata-url URL] [--name N]
           [--name-id-format F] [--allowed-groups a,b] [--json]
       gatehouse saml sp delete --sp ID|ENTITYID
       gatehouse saml cert list [--json]
       gatehouse saml cert rotate [--activate] [--retire] [--json]
       gatehouse saml cert retire [--json]

Options:
  --data-dir <dir>        the data directory (default ./data, or GATEHOUSE_DATA_DIR)
  --name-id-format F      email (default: the email address); persistent (pairwise: a value of its own per
                          service provider, so two applications cannot match their users by it);
                          persistent-shared (the user id, the same at every application); unspecified;
                          or the full URN (the persistent URN means persistent)
  --allowed-groups a,b    only members of one of these groups get an assertion (empty: everyone)
  --json                  machine-readable output (sp create/update: the service provider as JSON)
  cert rotate             publishes a next signing certificate in the metadata; it signs only after
                          saml.keyRolloverDays (default 7) or at \`cert rotate --activate\`. The safe order:
                            1. gatehouse saml cert rotate            (the metadata carries both certificates)
                            2. every service provider re-reads the metadata, or is given the new certificate
                            3. gatehouse saml cert rotate --activate (the next certificate signs from now)
                            4. gatehouse saml cert retire            (the old certificate leaves the metadata)
  --activate              the next certificate signs from now (without one published: a new one signs at
                          once, and service providers that do not have it yet refuse every sign-in)
  --retire                with rotate: activates, and every other certificate leaves the metadata at once
                          (for a key that must go now)

Works on the data directory whether or not a server runs on it; a running server sees the change
at its next request.
`
