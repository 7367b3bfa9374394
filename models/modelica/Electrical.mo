// Small electrical components for the hierarchical-model tests (written for
// daec; not the Modelica Standard Library).
package Electrical "Analog components"
  type Voltage = Real(unit = "V");
  type Current = Real(unit = "A");

  connector Pin "Electrical pin"
    Voltage v "potential";
    flow Current i "current into the pin";
  end Pin;

  partial model OnePort "Two pins, the voltage across and the current through"
    Pin p "positive pin";
    Pin n "negative pin";
    Voltage v "voltage drop p.v - n.v";
    Current i "current from p to n";
  equation
    v = p.v - n.v;
    0 = p.i + n.i;
    i = p.i;
  end OnePort;

  model Resistor
    extends OnePort;
    parameter Real R(unit = "Ohm") = 1 "resistance";
  equation
    v = R*i;
  end Resistor;

  model Capacitor
    extends OnePort(v(start = 0, fixed = true));
    parameter Real C(unit = "F") = 1 "capacitance";
  equation
    i = C*der(v);
  end Capacitor;

  model Inductor
    extends OnePort(i(start = 0, fixed = true));
    parameter Real L(unit = "H") = 1 "inductance";
  equation
    L*der(i) = v;
  end Inductor;

  model ConstantVoltage
    extends OnePort;
    parameter Real V(unit = "V") = 1 "source voltage";
  equation
    v = V;
  end ConstantVoltage;

  model Ground
    Pin p;
  equation
    p.v = 0;
  end Ground;
end Electrical;
