within Modelica.Blocks;
package Math "Mathematical functions as input/output blocks"

  block Gain "Output the product of a gain value with the input signal: y = k*u"
    parameter Real k(start = 1, unit = "1") "Gain value multiplied with input signal";
    Interfaces.RealInput u "Input signal connector";
    Interfaces.RealOutput y "Output signal connector";
  equation
    y = k*u;
  end Gain;

  block Add "Output the sum of the two inputs: y = k1*u1 + k2*u2"
    extends Interfaces.SI2SO;
    parameter Real k1 = +1 "Gain of input signal 1";
    parameter Real k2 = +1 "Gain of input signal 2";
  equation
    y = k1*u1 + k2*u2;
  end Add;

  block Feedback "Output the difference between commanded and feedback input: y = u1 - u2"
    Interfaces.RealInput u1 "Commanded input";
    Interfaces.RealInput u2 "Feedback input";
    Interfaces.RealOutput y "Output signal";
  equation
    y = u1 - u2;
  end Feedback;
end Math;
