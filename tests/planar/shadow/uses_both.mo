// Uses the user's own `PlanarMechanics.Decay` and a class of the
// shipped `Modelica`, which the user's package does not shadow.
model UsesBoth
  PlanarMechanics.Decay d(k = 3);
  Modelica.Electrical.Analog.Basic.Ground ground;
end UsesBoth;
