// Uses the user's own `Modelica.Decay` (tests/modelica/shadow/Modelica).
model UsesOwn
  Modelica.Decay d(k = 3);
end UsesOwn;
