"""Activities: thin wrappers over timecontract and ledger, and the downstream calls (DESIGN §2)."""
