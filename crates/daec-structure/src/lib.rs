//! Structural analysis of DAEs: Pryce's Signature method, HVT, offsets, BTF, Pantelides, Dulmage-Mendelsohn.
