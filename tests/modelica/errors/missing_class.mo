model Circuit
  Resistr R1;
end Circuit;
