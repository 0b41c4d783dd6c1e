-- `persistent` NameIDs are pairwise from now on; the service providers that had one keep the user id they were given.
UPDATE `samlServiceProvider` SET `nameIdFormat` = 'persistent-shared' WHERE `nameIdFormat` IN ('persistent', 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent');
