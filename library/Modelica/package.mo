package Modelica "The Modelica library shipped with daec (MSL 4.x class paths)"
  annotation(Documentation(info = "Components written for daec with the class paths, connectors, parameters and defaults of the Modelica Standard Library 4.x; see docs/library.md."));
end Modelica;
