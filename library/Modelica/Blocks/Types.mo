within Modelica.Blocks;
package Types "Types of the block parameters (the MSL's enumerations as packages of Integer constants)"
  package Init "Type of initialization (the MSL's enumeration Modelica.Blocks.Types.Init; a parameter of this type is an Integer here)"
    constant Integer NoInit = 1 "No initialization (start values are used as guess values with fixed = false)";
    constant Integer SteadyState = 2 "Steady state initialization (derivatives of states are zero)";
    constant Integer InitialState = 3 "Initialization with initial states";
    constant Integer InitialOutput = 4 "Initialization with initial outputs (and steady state of the states if possible)";
  end Init;
end Types;
