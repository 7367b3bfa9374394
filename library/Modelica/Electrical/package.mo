within Modelica;
package Electrical "Electrical components"
end Electrical;
