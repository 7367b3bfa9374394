// Constants of the shipped Modelica library by full name, through a
// renaming import of their package, and imported themselves (MLS 3.6,
// §13.2.1: an import names a constant as well as a class), qualified and
// unqualified; a constant of a package of the file imported the same way.
package Units
  constant Real mile = 1609.344;
end Units;

model Top
  import C = Modelica.Constants;
  import Modelica.Constants.pi;
  import Modelica.Constants.{g_n, eps};
  import Modelica.Constants.*;
  import Units.mile;
  parameter Real tau = 2*pi "a full turn";
  parameter Real g = g_n;
  parameter Real tiny = eps;
  parameter Real s = sigma "from the unqualified import";
  parameter Real zero = C.T_zero;
  parameter Real kmh = 3.6*mile/1000 "one mile per second in km/h";
  Real x(start = 1, fixed = true);
equation
  der(x) = -g*x/(tau*(1 + tiny) + s + zero*0 + kmh*0);
end Top;
