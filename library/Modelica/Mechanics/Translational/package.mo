within Modelica.Mechanics;
package Translational "One-dimensional translational mechanical components"
end Translational;
